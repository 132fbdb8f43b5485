package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/klauspost/compress/zstd"

	"github.com/vtop-dev/vtop/human"
	"github.com/vtop-dev/vtop/scrape"
)

// MaxTargets bounds the targets a recording's header may list: every
// reader keeps something of each, and a header of a few MiB listing
// 200,000 targets had export take 780-930 MiB. A recorder is never
// started on more.
const MaxTargets = 10_000

// Limits bound what a reader of a recording holds, from vtop's one bound
// on its memory (--max-memory): a frame's page is checked against them
// before it is decoded, so that a frame of a few KiB that decodes to
// gigabytes (a zstd bomb) is refused, not decoded.
type Limits struct {
	// MaxMemory is the bound (default scrape.DefaultMaxMemory).
	MaxMemory int64
}

// maxPageLen is a size no page can have (a TiB): a frame stating more is
// damage, not a page too large for the bound.
const maxPageLen = 1 << 40

// withDefaults fills what is unset.
func (l Limits) withDefaults() Limits {
	if l.MaxMemory <= 0 {
		l.MaxMemory = scrape.DefaultMaxMemory
	}
	return l
}

// pageCap is the most a frame's page may decode to: a sixteenth of the
// bound, which at --max-memory's default is --max-body's default (16
// MiB), the largest page live mode reads. Decoding one holds the
// content, the page joined back from its columns, and its parse; pages
// a recording keeps between frames take another quarter (heldCap).
func (l Limits) pageCap() int { return int(l.MaxMemory / 16) }

// heldCap is how much decoded content a cursor keeps between frames
// (each target's newest, the next one's dictionary): a quarter of the
// bound. A content that does not fit is kept only until another target's
// frame is decoded (Cursor.keep), its target's next frame then decoded
// from its key frame. Twenty targets of pages at the cap, replayed, peak
// at about 210 MiB under the default bound (TestHostileMemory).
func (l Limits) heldCap() int { return int(l.MaxMemory / 4) }

// tooLarge is the refusal of a frame whose page passes the cap.
func (l Limits) tooLarge(seq int64, target string, size uint64) error {
	return fmt.Errorf("frame %d of %s holds a page of %s, more than a page may hold at --max-memory %s (%s): raise --max-memory to read it",
		seq, target, human.Bytes(int64(size)), human.FlagBytes(int64(l.MaxMemory)), human.Bytes(int64(l.pageCap())))
}

// compressBound is more than zstd ever takes to compress n bytes (its
// ZSTD_COMPRESSBOUND, n + n/256 and a little, with room for the frame's
// header): a frame whose compressed content is longer is not vtop's
// writing, and reading it back would take more than its page.
func compressBound(n int) int { return n + n>>8 + 1<<10 }

// contentSize is the decoded size the zstd frame at the start of zst
// states in its header, when it states one.
func contentSize(zst []byte) (uint64, bool) {
	var h zstd.Header
	if err := h.Decode(zst); err != nil || !h.HasFCS {
		return 0, false
	}
	return h.FrameContentSize, true
}

// countTargets counts the targets a header's JSON lists without keeping
// them, so that a header of a million is refused before it is read.
type countTargets struct {
	Targets targetCount `json:"targets"`
}

type targetCount int

func (n *targetCount) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil // not a list: the header's own decoding says so
	}
	for dec.More() {
		var ut *json.UnmarshalTypeError
		if err := dec.Decode(&struct{}{}); err != nil && !errors.As(err, &ut) {
			return nil // bad JSON: the header's own decoding says so
		}
		*n++
	}
	return nil
}

// tooManyTargets is the refusal of a header listing more than MaxTargets.
func tooManyTargets(n int) error {
	return fmt.Errorf("the header lists %d targets, more than a recording may hold (%d)", n, MaxTargets)
}
