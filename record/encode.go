package record

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/scrape"
)

// recentFrames is how many frames of a target the encoder remembers to
// match a report's readings to frames: the newest sample of a report's
// readings is always among the last few frames.
const recentFrames = 64

// targetEnc compresses the frames of one target. frame runs on the
// target's scrape goroutine only; cut runs on the monitor's.
type targetEnc struct {
	index    int
	seq      int64
	prev     []byte // the previous frame's content: the next one's dictionary
	havePrev bool   // the frame seq had a page
	content  []byte
	page     []byte // the page as kept, before the split in columns
	keys     []byte
	values   []byte

	mu     sync.Mutex // guards recent
	recent []frameRef
}

// frameRef ties a sample time to its frame.
type frameRef struct {
	time int64
	seq  int64
}

// Encoders are shared, not one per target: a frame's dictionary is the
// target's previous frame, set at every frame, so an encoder holds nothing
// of a target between frames. One each, with zstd's default window, held
// some 10 MB of tables and history: 2 GB to record 200 targets. A frame
// takes an encoder of its window (windowBits) and gives it back; a few
// idle ones of each window are kept, so that a burst of frames at once
// leaves no more behind.
var encoders encoderPool

// maxIdleEncoders is how many idle encoders of one window are kept.
const maxIdleEncoders = 4

// encoderPool holds the idle encoders, by window: idle[b] are those of
// window 1<<b.
type encoderPool struct {
	mu   sync.Mutex
	idle [maxWindowBits + 1][]*zstd.Encoder
}

// put gives back an encoder of window 1<<bits.
func (p *encoderPool) put(enc *zstd.Encoder, bits int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle[bits]) < maxIdleEncoders {
		p.idle[bits] = append(p.idle[bits], enc)
	}
}

// take returns an idle encoder of window 1<<bits, or nil.
func (p *encoderPool) take(bits int) *zstd.Encoder {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.idle[bits])
	if n == 0 {
		return nil
	}
	enc := p.idle[bits][n-1]
	p.idle[bits] = p.idle[bits][:n-1]
	return enc
}

// The windows of the encoders: 64 KiB to 8 MiB, zstd's default.
const (
	minWindowBits = 16
	maxWindowBits = 23
)

// windowBits is the window for content of n bytes, as a power of two:
// room for the previous frame, the dictionary, and this one, so that
// every match stays in reach.
func windowBits(n int) int {
	b := minWindowBits
	for 1<<b < 2*n && b < maxWindowBits {
		b++
	}
	return b
}

// encoder returns a zstd encoder whose window suits content of n bytes;
// give it back with encoders.put.
func encoder(n int) (enc *zstd.Encoder, bits int) {
	bits = windowBits(n)
	if enc := encoders.take(bits); enc != nil {
		return enc, bits
	}
	// Errors only come from invalid options, which these are not.
	enc, _ = zstd.NewWriter(nil,
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(false), // each record has its own CRC
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithWindowSize(1<<bits),
		zstd.WithLowerEncoderMem(true),
		zstd.WithEncoderDictRaw(0, []byte{0}))
	return enc, bits
}

// frame builds the payload of one frame record. A frame is a key frame
// (compressed alone) every keyEvery frames and after a failed scrape;
// otherwise the previous page is its dictionary: consecutive pages differ
// only in their numbers, so a frame costs little more than those.
func (e *targetEnc) frame(p scrape.Page, start time.Time, all bool, keyEvery int) []byte {
	e.seq++
	e.remember(p.Time.UnixNano())
	var flags byte
	b := binary.AppendUvarint(nil, uint64(e.index))
	b = binary.AppendUvarint(b, uint64(e.seq))
	b = binary.AppendVarint(b, p.Time.UnixNano()-start.UnixNano()) // wall time, whatever the monotonic readings
	hasPage := p.Body != nil
	if p.Err != "" {
		flags |= flagErr
	}
	if !hasPage {
		e.havePrev = false
		b = append(b, flags)
		return appendString(b, p.Err)
	}
	flags |= flagPage | flagColumns
	// A page that failed to parse is kept whole: the parse error's line
	// number refers to it.
	if all || p.Err != "" {
		flags |= flagWhole
		e.page = append(e.page[:0], p.Body...)
	} else {
		e.page = page.Keep(e.page[:0], p.Body)
	}
	e.keys, e.values = splitColumns(e.keys[:0], e.values[:0], e.page)
	e.content = append(e.content[:0], p.ContentType...)
	e.content = append(e.content, '\n')
	e.content = binary.AppendUvarint(e.content, uint64(len(e.keys)))
	e.content = append(e.content, e.keys...)
	e.content = append(e.content, e.values...)
	key := !e.havePrev || (e.seq-1)%int64(keyEvery) == 0
	if key {
		flags |= flagKey
	}
	b = append(b, flags)
	if p.Err != "" {
		b = appendString(b, p.Err)
	}
	b = binary.AppendUvarint(b, uint64(len(e.content)))
	b = e.compress(b, key)
	e.prev, e.content = e.content, e.prev
	e.havePrev = true
	return b
}

// compress appends e.content compressed, with e.prev as the dictionary
// unless key.
func (e *targetEnc) compress(dst []byte, key bool) []byte {
	enc, bits := encoder(max(len(e.content), len(e.prev)))
	defer encoders.put(enc, bits)
	dict := e.prev
	if key || len(dict) == 0 {
		// A one-byte dictionary keeps the encoder in dictionary mode
		// (switching modes rebuilds it) at no cost in size.
		dict = []byte{0}
	}
	_ = enc.ResetWithOptions(nil, zstd.WithEncoderDictRaw(0, dict))
	return enc.EncodeAll(e.content, dst)
}

// remember notes the time of frame e.seq.
func (e *targetEnc) remember(t int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.recent) == recentFrames {
		copy(e.recent, e.recent[1:])
		e.recent = e.recent[:recentFrames-1]
	}
	e.recent = append(e.recent, frameRef{time: t, seq: e.seq})
}

// cut finds the frames a report's readings of this target held: the
// newest sample's frame, and how many samples there were. Samples are
// matched by time; when several frames share the newest time (a clock
// that did not move), the readings hold the first k of them, k being how
// many samples at the end share it.
func (e *targetEnc) cut(samples []catalogue.Sample) Cut {
	n := len(samples)
	if n == 0 {
		return Cut{}
	}
	newest := samples[n-1].Time.UnixNano()
	k := 0
	for i := n - 1; i >= 0 && samples[i].Time.UnixNano() == newest; i-- {
		k++
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, f := range e.recent {
		if f.time == newest {
			if k--; k == 0 {
				return Cut{Seq: f.seq, Count: n}
			}
		}
	}
	return Cut{} // not recorded (the recording started after it)
}

// appendString appends a uvarint length and s.
func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendTick builds the payload of a tick record.
func appendTick(b []byte, t Tick, start time.Time) []byte {
	b = binary.AppendVarint(b, t.Time.UnixNano()-start.UnixNano())
	b = binary.AppendUvarint(b, uint64(max(t.Window, 0)))
	b = binary.AppendUvarint(b, uint64(len(t.Cuts)))
	for _, c := range t.Cuts {
		b = binary.AppendUvarint(b, uint64(max(c.Seq, 0)))
		b = binary.AppendUvarint(b, uint64(max(c.Count, 0)))
	}
	return b
}
