package rules

import (
	"fmt"
	"time"

	"github.com/prometheus/common/model"
)

// dur writes a duration as PromQL does (5s, 1m30s, 12s500ms).
func dur(d time.Duration) string { return model.Duration(d).String() }

// num writes a threshold without trailing zeros.
func num(v float64) string { return fmt.Sprint(v) }
