package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Format is the shape of the file written.
type Format string

// The formats.
const (
	// FormatPrometheus is a rule file for Prometheus's rule_files.
	FormatPrometheus Format = "prometheus"
	// FormatOperator is a PrometheusRule object of the Prometheus
	// Operator, whose spec is the rule file.
	FormatOperator Format = "prometheus-operator"
	// FormatVMAlert is a rule file for vmalert (-rule) over
	// VictoriaMetrics: the Prometheus one, its group asking with
	// nocache=1 (vmalertParams).
	FormatVMAlert Format = "vmalert"
)

// Formats are the formats Write knows.
var Formats = []Format{FormatPrometheus, FormatOperator, FormatVMAlert}

// vmalertParams are the parameters of every query of the group in
// vmalert's format, with why. VictoriaMetrics answers a query of its
// last -search.latencyOffset (30 s by default) as of that long ago unless
// asked with nocache=1: vmalert's evaluation at T would record the
// figures of T−30s stamped T, and every rule reading the group's own
// rows back (the states, the alerts) would read them another 30 s late,
// so that the states would be neither vtop's nor of their time.
var vmalertParams = []Pair{{"nocache", "1"}}

// vmalertNote is the header line of vmalert's format that says why its
// queries ask with nocache=1.
const vmalertNote = "For vmalert: each query asks with nocache=1, or VictoriaMetrics would answer it as of -search.latencyOffset (30s by default) ago and the rules would judge the past."

// OperatorName is the PrometheusRule object's name.
const OperatorName = "vtop"

// Write renders f as YAML in the format asked.
func Write(w io.Writer, f File, format Format) error {
	var b bytes.Buffer
	header := f.Header
	if format == FormatVMAlert {
		header = append([]string{header[0], vmalertNote}, header[1:]...)
	}
	for _, line := range header {
		b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
	}
	indent := ""
	var params []Pair
	switch format {
	case FormatPrometheus:
	case FormatVMAlert:
		params = vmalertParams
	case FormatOperator:
		b.WriteString("apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n")
		b.WriteString("  name: " + OperatorName + "\n  labels:\n    app.kubernetes.io/name: vtop\nspec:\n")
		indent = "  "
	default:
		return fmt.Errorf("format %q: want one of %v", format, Formats)
	}
	writeGroups(&b, indent, f.Groups, params)
	_, err := w.Write(b.Bytes())
	return err
}

// writeGroups writes the groups: key under indent, each group's queries
// with the parameters given (vmalert's params:).
func writeGroups(b *bytes.Buffer, indent string, groups []Group, params []Pair) {
	b.WriteString(indent + "groups:\n")
	for _, g := range groups {
		fmt.Fprintf(b, "%s  - name: %s\n", indent, quote(g.Name))
		fmt.Fprintf(b, "%s    interval: %s\n", indent, dur(g.Interval))
		if len(params) > 0 {
			fmt.Fprintf(b, "%s    params:\n", indent)
			for _, p := range params {
				fmt.Fprintf(b, "%s      %s: [%s]\n", indent, p.Name, quote(p.Value))
			}
		}
		fmt.Fprintf(b, "%s    rules:\n", indent)
		for _, r := range g.Rules {
			writeRule(b, indent+"      ", r)
		}
	}
}

// writeRule writes one rule as a list item at indent.
func writeRule(b *bytes.Buffer, indent string, r Rule) {
	if r.Record != "" {
		fmt.Fprintf(b, "%s- record: %s\n", indent, r.Record)
	} else {
		fmt.Fprintf(b, "%s- alert: %s\n", indent, r.Alert)
	}
	in := indent + "  "
	writeExpr(b, in, r.Expr)
	if r.Alert != "" {
		fmt.Fprintf(b, "%sfor: %s\n", in, dur(r.For))
		if r.KeepFiringFor > 0 {
			fmt.Fprintf(b, "%skeep_firing_for: %s\n", in, dur(r.KeepFiringFor))
		}
	}
	writePairs(b, in, "labels", r.Labels)
	writePairs(b, in, "annotations", r.Annotations)
}

// writeExpr writes an expression: a block scalar when it spans lines, so
// that it reads as written.
func writeExpr(b *bytes.Buffer, indent, expr string) {
	if !strings.Contains(expr, "\n") {
		fmt.Fprintf(b, "%sexpr: %s\n", indent, quote(expr))
		return
	}
	fmt.Fprintf(b, "%sexpr: |-\n", indent)
	for _, line := range strings.Split(expr, "\n") {
		fmt.Fprintf(b, "%s  %s\n", indent, line)
	}
}

// writePairs writes a map in the pairs' order.
func writePairs(b *bytes.Buffer, indent, key string, pairs []Pair) {
	if len(pairs) == 0 {
		return
	}
	fmt.Fprintf(b, "%s%s:\n", indent, key)
	for _, p := range pairs {
		fmt.Fprintf(b, "%s  %s: %s\n", indent, p.Name, quote(p.Value))
	}
}

// quote writes a string as a YAML double-quoted scalar (a JSON string is
// one), leaving non-ASCII text and template brackets as they are.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
