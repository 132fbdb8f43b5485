package analysis

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// definedNumJSON is a figure's JSON by its definition: the figure rounded
// to jsonDigits significant digits (a format and a parse), then written
// shortest; null when unknown. Num.MarshalJSON lays the digits of one
// formatting out instead, and must write these bytes.
func definedNumJSON(n Num) string {
	if !n.Known() {
		return "null"
	}
	rounded, err := strconv.ParseFloat(strconv.FormatFloat(float64(n), 'g', jsonDigits, 64), 64)
	if err != nil {
		panic(err)
	}
	return strconv.FormatFloat(rounded, 'g', -1, 64)
}

// numJSONCases are the figures at the edges of the formatting: where
// e-notation starts (exponents -5 and 6), where rounding to jsonDigits
// digits carries into a new exponent, zeros and their sign, the subnormals
// and the largest floats.
var numJSONCases = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, 11.100000000000001, 100, 123456, 999999, 999999.5,
	999999.9999994, 999999.9999995, 999999.99999999, 1e6, 1234567, -1234567, 1e20, 1e21, 1e22, 123456789012345678,
	0.0001, 0.00012345678901234, 0.000099999999999994, 0.000099999999999995, 0.00001, 1e-5, -1e-5,
	9.99999999999e-5, 9.999999999995e-5, 0.1, 0.1 + 0.2, 1.0 / 3, 2.0 / 3, -2.0 / 3, 430_000, 1.7e9,
	math.Pi * 1e5, math.Pi * 1e6, math.E * 1e-4, math.E * 1e-5,
	5e-324, -5e-324, 2.2250738585072014e-308, 2.2250738585072009e-308, 1e-290, 1.0000000000001e-290, 9.99999999999e-291, 1e-300,
	math.MaxFloat64, -math.MaxFloat64, 1.79769313486e308, 1.7976931348623e308, 0.27, 0.027, 8.5,
	math.NaN(), math.Inf(1), math.Inf(-1),
}

// TestNumJSON: every figure is written as its definition says, at the
// edges of the formatting and over random floats of every magnitude.
func TestNumJSON(t *testing.T) {
	cases := append([]float64(nil), numJSONCases...)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		cases = append(cases, math.Float64frombits(rng.Uint64()))
		// Short decimals, the usual figures, with their neighbours.
		x := float64(rng.IntN(2_000_000)) * math.Pow10(rng.IntN(40)-20)
		cases = append(cases, x, math.Nextafter(x, 0), math.Nextafter(x, math.Inf(1)))
	}
	for _, f := range cases {
		n := Num(f)
		want := definedNumJSON(n)
		got, err := n.MarshalJSON()
		if err != nil || string(got) != want {
			t.Fatalf("Num(%v).MarshalJSON() = %q, %v; want %q", f, got, err, want)
		}
	}
}

// FuzzNumJSON: any float is written as its definition says.
func FuzzNumJSON(f *testing.F) {
	for _, x := range numJSONCases {
		f.Add(math.Float64bits(x))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		n := Num(math.Float64frombits(bits))
		want := definedNumJSON(n)
		if got, err := n.MarshalJSON(); err != nil || string(got) != want {
			t.Fatalf("Num(%v) written %q, want %q", float64(n), got, want)
		}
	})
}

// goldenReports are the reports of the golden file: busy, warming, down,
// with n/a figures and infinite bounds, as three lines and last the
// first of them again, indented.
func goldenReports() (lines []Report, indented Report) {
	cfg := DefaultConfig()
	busy := newServer()
	busy.running, busy.waiting, busy.kv = 200, 20, 0.8
	busySamples, now := run(busy, 30, time.Second, finishing(10, chat))
	late := chat
	late.ttft, late.e2e = 200, 1e4 // beyond the last bucket: +Inf upper bounds
	slow := newServer()
	slow.running = 3
	slowSamples, _ := run(slow, 30, time.Second, finishing(0.3, late))
	downSamples, _ := downAndEverything(true)
	warm := newServer()
	warmSamples, _ := run(warm, 1, time.Second)
	targets := []catalogue.Readings{
		{Target: "busy:8000", Samples: busySamples},
		{Target: "slow:8000", Samples: slowSamples},
		{Target: "down:8000", Samples: downSamples},
		{Target: "warming:8000", Samples: warmSamples},
	}
	r := Analyze(now, targets, cfg, nil)
	return []Report{r, Analyze(now, targets[:1], cfg, nil), Analyze(now, nil, cfg, nil)}, r
}

// goldenPath is the golden file of the reports' JSON.
var goldenPath = filepath.Join("testdata", "reports.golden.jsonl")

// TestReportJSONGolden: whole reports — busy, warming, down, with n/a
// figures and infinite bounds — are written by encoding/json, as --json
// and --jsonl write them, byte for byte as the golden file holds them.
func TestReportJSONGolden(t *testing.T) {
	lines, indentedReport := goldenReports()
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	for _, rep := range lines {
		if err := enc.Encode(rep); err != nil {
			t.Fatal(err)
		}
	}
	indented := json.NewEncoder(&out)
	indented.SetIndent("", "  ")
	if err := indented.Encode(indentedReport); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(goldenPath, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("reports written differently from %s (go test -run TestReportJSONGolden -update rewrites it)", goldenPath)
	}
	if !bytes.Contains(want, []byte(`null]`)) || !bytes.Contains(want, []byte(`"p50":null`)) {
		t.Errorf("%s lacks an infinite bound or an n/a quantile: the reports do not cover them", goldenPath)
	}
}

// BenchmarkNumJSON writes a figure of the usual kind: a rate that is
// neither whole nor zero.
func BenchmarkNumJSON(b *testing.B) {
	figures := []Num{6.99825043739, 0.00377791770066, 3001.99950012, 0.0335294117647, 8847.82179455, 3.456e6}
	for i := range b.N {
		if _, err := figures[i%len(figures)].MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}
