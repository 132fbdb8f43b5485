package analysis

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// TestQuantileBuckets: every quantile keeps the Prometheus-exact value and
// carries the bucket it fell in, so that a quantile only bounded by its
// bucket can be shown as such: "<300ms" in the first bucket (where
// histogram_quantile interpolates from 0), ">80s" beyond the last finite
// bound (where it returns that bound).
func TestQuantileBuckets(t *testing.T) {
	quick := chat
	quick.queue = 0.008 // every queue time in the first bucket, (0, 0.3]
	stuck := chat
	stuck.itl = 100 // every ITL beyond the last finite bucket, 80 s
	s := newServer()
	s.running = 48
	samples, now := run(s, 30, time.Second, finishing(6, quick), finishing(1, stuck))
	r := analyzeOne(samples, now, DefaultConfig())
	tests := []struct {
		name       string
		value      Num
		bucket     QuantileBucket
		wantValue  float64
		wantBucket [2]float64
		wantShown  string
	}{
		{"p50 queue in the first bucket", r.Queue.P50, r.Queue.P50Bucket, 0.15, [2]float64{0, 0.3}, "<300ms"},
		{"p99 ITL beyond the last finite bucket", r.ITL.P99, r.ITL.P99Bucket, 80, [2]float64{80, math.Inf(1)}, ">80s"},
		{"p50 TTFT inside a bucket", r.TTFT.P50, r.TTFT.P50Bucket, 0.25 + 0.25*(3.5/7), [2]float64{0.25, 0.5}, "375ms"},
	}
	for _, tt := range tests {
		if !sameFloat(tt.value.Float(), tt.wantValue) {
			t.Errorf("%s: value %v, want the Prometheus-exact %v", tt.name, tt.value, tt.wantValue)
		}
		if tt.bucket.Lower.Float() != tt.wantBucket[0] || tt.bucket.Upper.Float() != tt.wantBucket[1] {
			t.Errorf("%s: bucket %v, want %v", tt.name, tt.bucket, tt.wantBucket)
		}
		if got := tt.bucket.Seconds(tt.value); got != tt.wantShown {
			t.Errorf("%s: shown %q, want %q", tt.name, got, tt.wantShown)
		}
	}
	if pre, x, _ := r.ITL.P99Bucket.Shown(r.ITL.P99); pre != ">" || x != 80 {
		t.Errorf("the screen's bound of p99 ITL: %q %v, want > 80", pre, x)
	}
	if want := "p99 ITL >80s over the 100ms SLO"; !strings.Contains(strings.Join(r.Reasons, "\n"), want) {
		t.Errorf("reasons %q lack %q: a bounded quantile is not written as exact", r.Reasons, want)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"p50":0.15,`, `"p50_bucket":[0,0.3]`, `"p99":80,`, `"p99_bucket":[80,null]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
	var back ReplicaReport
	if err := json.Unmarshal(b, &back); err != nil || back.ITL.P99Bucket.Upper.Float() != math.Inf(1) || back.Queue.P50Bucket.Upper != 0.3 {
		t.Errorf("buckets read back as %v, %v (%v)", back.ITL.P99Bucket, back.Queue.P50Bucket, err)
	}
	idle := analyzeOne(samples[:1], now, DefaultConfig())
	if bb, _ := json.Marshal(idle.TTFT); !strings.Contains(string(bb), `"p99_bucket":null`) {
		t.Errorf("an n/a quantile has a null bucket: %s", bb)
	}
}

// TestWideBucketIsShownAsItsBounds: a quantile that fell in a bucket too
// wide to place it (its upper bound more than wideBucketRatio times its
// lower) is written as the bucket's bounds, since the interpolated value
// inside it ("400s" in vLLM's (160 s, 640 s]) is precise-looking and may
// contradict the other figures; a bucket at most that wide keeps its
// value, and the first and the +Inf buckets keep their bounded forms.
func TestWideBucketIsShownAsItsBounds(t *testing.T) {
	inf := Num(math.Inf(1))
	tests := []struct {
		name   string
		value  Num
		bucket QuantileBucket
		want   string
	}{
		{"vLLM's (160 s, 640 s] TTFT bucket", 400, QuantileBucket{Lower: 160, Upper: 640}, "160s–640s"},
		{"(1 s, 2.5 s]: 2.5 times", 1.8, QuantileBucket{Lower: 1, Upper: 2.5}, "1s–2.5s"},
		{"(100 ms, 250 ms]", 0.2, QuantileBucket{Lower: 0.1, Upper: 0.25}, "100ms–250ms"},
		{"(2.5 s, 5 s]: twice, placed", 3.2, QuantileBucket{Lower: 2.5, Upper: 5}, "3.2s"},
		{"(250 ms, 500 ms]: twice, placed", 0.375, QuantileBucket{Lower: 0.25, Upper: 0.5}, "375ms"},
		{"the first bucket", 0.15, QuantileBucket{Lower: 0, Upper: 0.3}, "<300ms"},
		{"the +Inf bucket", 80, QuantileBucket{Lower: 80, Upper: inf}, ">80s"},
		{"n/a", NA, QuantileBucket{Lower: NA, Upper: NA}, "n/a"},
	}
	for _, tt := range tests {
		if got := tt.bucket.Seconds(tt.value); got != tt.want {
			t.Errorf("%s: %v in %v shown %q, want %q", tt.name, tt.value, tt.bucket, got, tt.want)
		}
	}
}
