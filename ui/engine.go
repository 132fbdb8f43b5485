package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

// engineName names a replica's server: its engine, "router", or "" before
// it has answered.
func engineName(r *analysis.ReplicaReport) string {
	switch {
	case r.Router != catalogue.RouterNone:
		return "router"
	case r.EngineKind == catalogue.EngineUnknown:
		return ""
	}
	return r.EngineKind.String()
}

// paneEngine is the engine named in a pane's title: any but vLLM, which
// goes without saying, and routers with their backends.
func paneEngine(r *analysis.ReplicaReport) string {
	switch {
	case r.Router != catalogue.RouterNone:
		return fmt.Sprintf("router (%d backends)", len(r.Backends))
	case r.EngineKind == catalogue.EngineVLLM || r.EngineKind == catalogue.EngineUnknown:
		return ""
	}
	return r.EngineKind.String()
}

// engineFigures are what the engine's page says beyond the common
// figures: engine, role, router, derivations and vLLM's newest signals.
func engineFigures(th *Theme, r *analysis.ReplicaReport) []string {
	head := "engine " + orNA(engineName(r))
	if r.Role != catalogue.RoleUnknown {
		head += ", role " + r.Role.String()
	}
	if r.Router != catalogue.RouterNone {
		head += fmt.Sprintf(", %s router in front of %s", r.Router, strings.Join(r.Backends, ", "))
	}
	lines := []string{th.title.Render("engine") + "  " + head}
	keys := make([]string, 0, len(r.Derived))
	for k := range r.Derived {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		lines = append(lines, th.dim.Render("derived ")+k+": "+r.Derived[k])
	}
	return append(lines, signalLines(r)...)
}

// orNA is s, or "n/a" when it is empty.
func orNA(s string) string {
	if s == "" {
		return na
	}
	return s
}

// signalLines are vLLM's newest signals, a line per family the page has.
func signalLines(r *analysis.ReplicaReport) []string {
	var lines []string
	add := func(known bool, format string, args ...any) {
		if known {
			lines = append(lines, fmt.Sprintf(format, args...))
		}
	}
	add(r.WaitingCapacity.Known() || r.WaitingDeferred.Known(), "waiting by reason: capacity %s, deferred %s",
		fmtCount(r.WaitingCapacity), fmtCount(r.WaitingDeferred))
	add(r.SleepLevel.Known(), "sleep level %s (0 awake, 1 weights offloaded, 2 discarded)", fmtCount(r.SleepLevel))
	add(r.AdmissionRejectionsPerSecond.Known(), "admissions refused %s/s", fmtRate(r.AdmissionRejectionsPerSecond))
	q := r.PreemptionsPerRequest
	add(q.P50.Known(), "preemptions per request p50 %s p99 %s", q.P50Bucket.Count(q.P50), q.P99Bucket.Count(q.P99))
	recomputed := "estimated"
	if r.RecomputedMeasured {
		recomputed = "counted"
	}
	add(r.RecomputedTokensPerSecond > 0, "recomputed prompt tokens %s/s (%s)", fmtRate(r.RecomputedTokensPerSecond), recomputed)
	add(r.PromptCachedShare.Known(), "prompt tokens from cache or transfer %s", r.PromptCachedShare.Percent())
	add(r.ExternalPrefixCacheHitRate.Known(), "external prefix cache hit rate %s", r.ExternalPrefixCacheHitRate.Percent())
	add(r.NIXLTransfer.P99.Known() || r.NIXLFailedPerSecond.Known(), "NIXL KV transfers: p99 %s, %s/s, failed %s/s",
		fmtQuantile(r.NIXLTransfer, p99), bytesRate(r.NIXLBytesPerSecond), fmtRate(r.NIXLFailedPerSecond))
	add(r.KVOffloadLoadBytesPerSecond.Known() || r.KVOffloadStoreBytesPerSecond.Known(), "KV offload: load %s/s, store %s/s",
		bytesRate(r.KVOffloadLoadBytesPerSecond), bytesRate(r.KVOffloadStoreBytesPerSecond))
	if r.SpecDecodeAcceptanceRate.Known() {
		line := fmt.Sprintf("spec decode: acceptance α %s, mean acceptance length %s", r.SpecDecodeAcceptanceRate.Percent(), r.SpecDecodeMeanAcceptanceLength.Amount())
		if len(r.SpecDecodeAcceptanceByPosition) > 0 {
			byPos := make([]string, len(r.SpecDecodeAcceptanceByPosition))
			for i, a := range r.SpecDecodeAcceptanceByPosition {
				byPos[i] = a.Percent()
			}
			line += ", by position " + strings.Join(byPos, " ")
		}
		lines = append(lines, line)
	}
	if l := r.LoRA; l != nil {
		lines = append(lines, fmt.Sprintf("LoRA adapters (max %s): running %s; waiting %s",
			fmtCount(l.MaxLoRAs), orNone(l.Running), orNone(l.Waiting)))
	}
	return lines
}

// orNone joins names, or says "none".
func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// bytesRate writes bytes as a decimal size: "1.2 GB", "n/a".
func bytesRate(n analysis.Num) string {
	if !n.Known() {
		return "n/a"
	}
	v := n.Float()
	for _, unit := range []string{"B", "kB", "MB", "GB", "TB"} {
		if v < 1000 || unit == "TB" {
			return analysis.Num(v).Amount() + " " + unit
		}
		v /= 1000
	}
	return ""
}
