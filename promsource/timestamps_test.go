package promsource

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pointsServer answers the source's queries as a Prometheus server, a
// proxy or a remote store would: up and one replica's requests counter,
// whose points (seconds before the evaluation time, value) are given in
// the order they are sent, repeats included; upBackwards sends up's
// points newest first.
func pointsServer(points [][2]float64, upBackwards bool) http.Handler {
	nameRe := regexp.MustCompile(`__name__=~("(?:[^"\\]|\\.)*")`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		q := r.Form.Get("query")
		at, _ := strconv.ParseFloat(r.Form.Get("time"), 64)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(q, "up") {
			first, second := at-2, at-1
			if upBackwards {
				first, second = second, first
			}
			fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up","instance":"a:8000","job":"vllm"},"values":[[%.3f,"1"],[%.3f,"1"]]}]}}`, first, second)
			return
		}
		result := ""
		if m := nameRe.FindStringSubmatch(q); m != nil {
			re, _ := strconv.Unquote(m[1])
			if regexp.MustCompile("^(?:" + re + ")$").MatchString("vllm:request_success_total") {
				var vals []string
				for _, p := range points {
					vals = append(vals, fmt.Sprintf(`[%.3f,"%g"]`, at-p[0], p[1]))
				}
				result = `{"metric":{"__name__":"vllm:request_success_total","finished_reason":"stop","instance":"a:8000","job":"vllm"},"values":[` + strings.Join(vals, ",") + `]}`
			}
		}
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[%s]}}`, result)
	})
}

// Points out of time order, or twice at one time, as a proxy or a broken
// remote store may answer them, are read as Prometheus's storage would
// hold them: in time order, once per timestamp (the first sent), and a
// warning says so. A counter of 16 requests a second then reads 16, not
// the hundreds its apparent resets gave.
func TestPointsOutOfOrderOrRepeated(t *testing.T) {
	var inOrder [][2]float64
	for s := 9.0; s >= 1; s-- {
		inOrder = append(inOrder, [2]float64{s, 1000 + 16*(9-s)})
	}
	reversed := make([][2]float64, 0, len(inOrder))
	for i := len(inOrder) - 1; i >= 0; i-- {
		reversed = append(reversed, inOrder[i])
	}
	repeated := append(append([][2]float64{}, inOrder[:5]...), inOrder[2:]...)
	// The same time twice with another value: the first one sent stays.
	clash := append(append([][2]float64{}, inOrder[:5]...), [2]float64{inOrder[4][0], 0})
	clash = append(clash, inOrder[5:]...)
	tests := []struct {
		name        string
		points      [][2]float64
		upBackwards bool
		warn        string // "" for none
	}{
		{name: "in order", points: inOrder},
		{name: "reversed", points: reversed, warn: "out of time order"},
		{name: "a run sent twice", points: repeated, warn: "out of time order"},
		{name: "one time twice, another value", points: clash, warn: "out of time order"},
		{name: "up newest first", points: inOrder, upBackwards: true, warn: "1 series answered points out of time order"},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(pointsServer(tt.points, tt.upBackwards))
		s := testSource(t, Config{URL: srv.URL, Window: 10 * time.Second})
		rep := refreshOnce(t, s)
		srv.Close()
		st := s.Status()
		if !st.OK() || len(rep.Replicas) != 1 {
			t.Errorf("%s: status %+v, %d replicas: want the one replica read", tt.name, st, len(rep.Replicas))
			continue
		}
		if got := rep.Replicas[0].Figures.RequestsPerSecond; math.Abs(got.Float()-16) > 0.5 {
			t.Errorf("%s: %v requests/s, want 16", tt.name, got)
		}
		warned := strings.Join(st.Warnings, "\n")
		if tt.warn == "" && warned != "" || !strings.Contains(warned, tt.warn) {
			t.Errorf("%s: warnings %q, want %q", tt.name, warned, tt.warn)
		}
	}
}
