package rules

import (
	"fmt"

	"github.com/vtop-dev/vtop/promql"
)

// dur writes a duration as PromQL does (5s, 1m30s, 12s500ms).
var dur = promql.Duration

// num writes a threshold without trailing zeros.
func num(v float64) string { return fmt.Sprint(v) }
