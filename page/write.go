package page

import (
	"math"
	"strconv"
	"strings"
)

// AppendValue writes a sample value as the text formats spell it, the
// Prometheus text format and OpenMetrics alike: +Inf, -Inf, NaN, or the
// shortest decimal that reads back as v.
func AppendValue(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// labelEscaper escapes a label value for the text formats.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// EscapeLabelValue escapes a label value for the text formats: a
// backslash, a double quote and a newline.
func EscapeLabelValue(v string) string { return labelEscaper.Replace(v) }
