package catalogue

import (
	"math"
	"testing"
	"time"
)

// A page that counts its KV cache in blocks gives its capacity in tokens
// as blocks × tokens per block, where it states no capacity in tokens;
// one that states it keeps its own; half the pair gives none.
func TestDeriveKVCapacity(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name                 string
		blocks, size, stated float64
		want                 float64
	}{
		{"blocks × tokens per block", 4096, 32, nan, 131072},
		{"a stated capacity is kept", 4096, 32, 1000, 1000},
		{"no block size, no capacity", 4096, nan, nan, nan},
		{"no blocks, no capacity", nan, 16, nan, nan},
		{"zero blocks say nothing of the capacity", 0, 16, nan, nan},
	}
	for _, tt := range tests {
		s := NewSample(time.Time{})
		s.Total.Scalars[KVBlocks], s.Total.Scalars[KVBlockTokens], s.KVCapacityTokens = tt.blocks, tt.size, tt.stated
		s.DeriveKVCapacity()
		if got := s.KVCapacityTokens; !(got == tt.want || math.IsNaN(got) && math.IsNaN(tt.want)) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// The tokens of a KV block are a size: series and parts give the largest,
// never the sum, which would multiply the capacity; the blocks add.
func TestKVBlockTokensNotSummed(t *testing.T) {
	if got := FoldScalar(KVBlockTokens, 16, 16); got != 16 {
		t.Errorf("FoldScalar(block tokens 16, 16) = %v, want 16", got)
	}
	if got := FoldScalar(KVBlocks, 100, 50); got != 150 {
		t.Errorf("FoldScalar(blocks 100, 50) = %v, want 150", got)
	}
	if got := FoldScalar(KVBlockTokens, math.NaN(), 32); got != 32 {
		t.Errorf("FoldScalar(block tokens NaN, 32) = %v, want 32", got)
	}
	var m Merge
	for _, size := range []float64{16, 32} {
		s := NewSeries()
		s.Scalars[KVBlockTokens], s.Scalars[KVBlocks] = size, 100
		m.Add(&s)
	}
	if got := m.Series(); got.Scalars[KVBlockTokens] != 32 || got.Scalars[KVBlocks] != 200 {
		t.Errorf("merged block tokens %v, blocks %v; want 32, 200", got.Scalars[KVBlockTokens], got.Scalars[KVBlocks])
	}
}

// TGI's KV usage is its token budget's fullness, where the page gives
// both; a batch past the budget is no fraction.
func TestDeriveTokenBudgetFullness(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		batch, budget, want float64
	}{
		{24000, 32000, 0.75},
		{0, 32000, 0},
		{24000, nan, nan},
		{nan, 32000, nan},
		{24000, 0, nan},
		{40000, 32000, nan},
	}
	for _, tt := range tests {
		s := NewSeries()
		s.Scalars[BatchTokens], s.Scalars[TokenBudget] = tt.batch, tt.budget
		derived := s.Derive(EngineTGI)
		got := s.Scalars[KVCacheUsage]
		if !(got == tt.want || math.IsNaN(got) && math.IsNaN(tt.want)) {
			t.Errorf("batch %v of budget %v: usage %v, want %v", tt.batch, tt.budget, got, tt.want)
		}
		if derived.Has(ScalarFigure(KVCacheUsage)) == math.IsNaN(tt.want) {
			t.Errorf("batch %v of budget %v: derived %v", tt.batch, tt.budget, derived.Has(ScalarFigure(KVCacheUsage)))
		}
	}
}
