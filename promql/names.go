package promql

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/vtop-dev/vtop/catalogue"
)

// spellings are the names a series is found under in a Prometheus
// server: a vLLM name under each of the prefixes its deployments rewrite
// it to, any other name as it is.
func spellings(name string) []string {
	rest, ok := strings.CutPrefix(name, catalogue.VLLMPrefix)
	if !ok {
		return []string{name}
	}
	names := make([]string, len(catalogue.Prefixes))
	for i, p := range catalogue.Prefixes {
		names[i] = p + rest
	}
	return names
}

// prefixGroup matches every spelling of the vLLM prefix, none included:
// spellings as a regex.
func prefixGroup() string {
	var alts []string
	for _, p := range catalogue.Prefixes {
		if p != "" {
			alts = append(alts, regexp.QuoteMeta(p))
		}
	}
	return "(?:" + strings.Join(alts, "|") + ")?"
}

// sampleName is one sample name vtop reads, as a regex.
type sampleName struct {
	re string
	// vllm is a vLLM name without its prefix, read under every spelling
	// of it; the others (process, API server, other engines) are as they are.
	vllm bool
	// bucket is a histogram's _bucket series: one series per bound, some
	// twenty times the series of any other name.
	bucket bool
}

// sampleNameOf is a name of the alias table as sampleName.
func sampleNameOf(n string) sampleName {
	rest, vllm := strings.CutPrefix(n, catalogue.VLLMPrefix)
	return sampleName{re: regexp.QuoteMeta(rest), vllm: vllm, bucket: strings.HasSuffix(n, "_bucket")}
}

// sampleNames returns the sample names of the alias table's families
// (histograms as their _bucket, _sum and _count series), in its order,
// each once: a name of another engine that a vLLM name already matches
// under the empty prefix (NIM's unprefixed names) is left out.
func sampleNames() []sampleName {
	var out []sampleName
	seen := map[sampleName]bool{}
	bare := slices.Contains(catalogue.Prefixes, "")
	for _, r := range catalogue.Reads {
		for _, n := range r.SampleNames() {
			sn := sampleNameOf(n)
			if seen[sn] || (!sn.vllm && bare && seen[sampleName{re: sn.re, vllm: true, bucket: sn.bucket}]) {
				continue
			}
			seen[sn] = true
			out = append(out, sn)
		}
	}
	return out
}

// namesRegex matches the names given, the vLLM ones under every prefix.
func namesRegex(names []sampleName) string {
	var vllm, alts []string
	for _, n := range names {
		if n.vllm {
			vllm = append(vllm, n.re)
		} else {
			alts = append(alts, n.re)
		}
	}
	switch len(vllm) {
	case 0:
	case 1:
		alts = slices.Insert(alts, 0, prefixGroup()+vllm[0])
	default:
		alts = slices.Insert(alts, 0, prefixGroup()+"(?:"+strings.Join(vllm, "|")+")")
	}
	return strings.Join(alts, "|")
}

// ReadNames matches the name of every series vtop reads: the engines'
// (vLLM's under every prefix) and the process and API-server families
// that come with them.
func ReadNames() string { return namesRegex(sampleNames()) }

// BucketNames matches the name of every _bucket series vtop reads.
func BucketNames() string {
	return namesRegex(slices.DeleteFunc(sampleNames(), func(s sampleName) bool { return !s.bucket }))
}

// NameParts splits the names of ReadNames (without the _bucket names
// unless buckets) into n regexes of about as many series each: every
// name is in exactly one. A _bucket name weighs as the twenty-odd series
// of a histogram's bounds, and the heaviest names go first, each to the
// lightest part, so that no part holds most of a fleet's series.
func NameParts(n int, buckets bool) []string {
	names := sampleNames()
	if !buckets {
		names = slices.DeleteFunc(names, func(s sampleName) bool { return s.bucket })
	}
	weight := func(s sampleName) int {
		if s.bucket {
			return 20
		}
		return 1
	}
	slices.SortStableFunc(names, func(a, b sampleName) int { return cmp.Compare(weight(b), weight(a)) })
	parts := make([][]sampleName, n)
	load := make([]int, n)
	for _, s := range names {
		i := slices.Index(load, slices.Min(load))
		parts[i] = append(parts[i], s)
		load[i] += weight(s)
	}
	out := make([]string, 0, n)
	for _, p := range parts {
		if len(p) > 0 {
			out = append(out, namesRegex(p))
		}
	}
	return out
}

// JobsOfVLLMSeries lists the jobs that have series that look like
// vLLM's, whatever the selector: where they are, when it finds none.
func JobsOfVLLMSeries() string {
	vllm := slices.DeleteFunc(sampleNames(), func(s sampleName) bool { return !s.vllm })
	anyVLLM := strings.TrimSuffix(prefixGroup(), "?") + ".+|" + namesRegex(vllm)
	return Aggregate("count", "job", Selector("", NameMatches(anyVLLM)))
}

// ScrapedJobs lists the jobs the server scrapes, whatever their series.
func ScrapedJobs() string { return Aggregate("count", "job", "up") }

// DCGMQuery reads every DCGM series vtop reads, under both DCGM
// spellings, narrowed by the label matchers given
// (`exported_namespace="llm"`, `Hostname=~"gpu-a|gpu-b"`). Its result,
// with each series' __name__ as the family, is what gpu.FromDCGMSeries
// reads (viaPrometheus).
func DCGMQuery(matchers ...string) string {
	names := make([]string, len(catalogue.DCGMReads))
	for i, r := range catalogue.DCGMReads {
		names[i] = r.Name
	}
	return Selector("", append([]string{NameIs(names...)}, matchers...)...)
}
