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
)

// Formats are the formats Write knows.
var Formats = []Format{FormatPrometheus, FormatOperator}

// OperatorName is the PrometheusRule object's name.
const OperatorName = "vtop"

// Write renders f as YAML in the format asked.
func Write(w io.Writer, f File, format Format) error {
	var b bytes.Buffer
	for _, line := range f.Header {
		b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
	}
	indent := ""
	switch format {
	case FormatPrometheus:
	case FormatOperator:
		b.WriteString("apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n")
		b.WriteString("  name: " + OperatorName + "\n  labels:\n    app.kubernetes.io/name: vtop\nspec:\n")
		indent = "  "
	default:
		return fmt.Errorf("format %q: want one of %v", format, Formats)
	}
	writeGroups(&b, indent, f.Groups)
	_, err := w.Write(b.Bytes())
	return err
}

// writeGroups writes the groups: key under indent.
func writeGroups(b *bytes.Buffer, indent string, groups []Group) {
	b.WriteString(indent + "groups:\n")
	for _, g := range groups {
		fmt.Fprintf(b, "%s  - name: %s\n", indent, quote(g.Name))
		fmt.Fprintf(b, "%s    interval: %s\n", indent, dur(g.Interval))
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
