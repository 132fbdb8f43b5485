package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/httperr"
	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/safetext"
)

// Page is one recorded scrape as fetched.
type Page struct {
	Frame
	// ContentType and Body are the response as kept: the families vtop
	// reads, or the whole page (Header.All, or a page that failed to
	// parse). Body is nil for a failed fetch and only valid until the
	// cursor's next call.
	ContentType string
	Body        []byte
	// Err is the scrape's error, safe to draw; empty on success.
	Err string
}

// Cursor decodes the frames of a recording. Reading the frames of a
// target in order decodes each once; a jump decodes from the key frame
// before it. Not safe for concurrent use.
type Cursor struct {
	rec       *Recording
	dec       *zstd.Decoder
	ingesters []*page.Ingester // made at a target's first page
	last      []decoded        // per target: the newest frame decoded
	page      []byte           // the page Page returned last
	raw       []byte           // the payload of the frame read last

	// held is the content of last kept within the limits' heldCap; loose
	// is the target whose content passed it, kept only until another
	// target's frame is decoded (-1: none).
	held  int
	loose int
	// spare is the buffer of content dropped last, which the next frame
	// decodes into when it fits: a fleet past the bound decodes without
	// leaving a page of garbage at every frame.
	spare []byte
}

// decoded is the content of one decoded frame.
type decoded struct {
	index   int // into the target's frames; -1: none
	content []byte
	held    bool // counted in Cursor.held
}

// errDecode is a frame whose checksum held but whose content does not
// decompress: written by something other than vtop.
var errDecode = errors.New("frame does not decompress")

// NewCursor returns a cursor over rec's frames.
func NewCursor(rec *Recording) *Cursor {
	// Errors only come from invalid options, which these are not. A frame
	// decodes into a buffer of the size it states, which the index holds
	// to the page cap, and no further (WithDecodeAllCapLimit): a frame
	// that decodes to more than it states stops there, whatever its zstd
	// header says. The memory cap bounds zstd's window alike.
	dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxMemory(uint64(rec.limits.pageCap())), zstd.WithDecodeAllCapLimit(true))
	c := &Cursor{rec: rec, dec: dec, loose: -1,
		ingesters: make([]*page.Ingester, len(rec.frames)), last: make([]decoded, len(rec.frames))}
	for t := range c.last {
		c.last[t].index = -1
	}
	return c
}

// Close releases the decoder.
func (c *Cursor) Close() { c.dec.Close() }

// Page returns frame i of target t (an index into Recording.Frames(t)).
func (c *Cursor) Page(t, i int) (Page, error) {
	f := c.rec.frames[t][i]
	p := Page{Frame: c.rec.infos[t][i]}
	h, err := c.read(f)
	if err != nil {
		return p, err
	}
	if f.flags&flagErr != 0 {
		p.Err = safetext.Sanitize(string(c.raw[h.errStart:h.errEnd]))
	}
	if f.flags&flagPage == 0 {
		return p, nil
	}
	content, err := c.content(t, i)
	if err != nil {
		return p, err
	}
	ct, body, _ := bytes.Cut(content, []byte{'\n'})
	p.ContentType, p.Body = string(ct), body
	if f.flags&flagColumns != 0 {
		n, w := binary.Uvarint(body)
		if w <= 0 || n > uint64(len(body)-w) {
			return p, fmt.Errorf("frame %d: %w", f.seq, errDecode)
		}
		// The page is no longer than its columns: grown once, not by
		// append's quarters (five times a large page's size in garbage).
		c.page = joinColumns(slices.Grow(c.page[:0], len(body)), body[w:w+int(n)], body[w+int(n):])
		p.Body = c.page
	}
	return p, nil
}

// read reads frame f's payload from the file into c.raw and parses its
// head.
func (c *Cursor) read(f frameMeta) (frameHead, error) {
	n := f.end - f.off
	if cap(c.raw) < n {
		c.raw = make([]byte, n)
	}
	c.raw = c.raw[:n]
	if _, err := c.rec.w.src.ReadAt(c.raw, int64(f.off)); err != nil {
		return frameHead{}, fmt.Errorf("frame %d: %w", f.seq, err)
	}
	h, _ := parseFrame(c.raw, 0, n, len(c.rec.frames))
	return h, nil
}

// Sample returns frame i of target t as the live poller's sample: the
// page parsed by the same parser, or the scrape's error.
func (c *Cursor) Sample(t, i int) catalogue.Sample {
	p, err := c.Page(t, i)
	if err != nil {
		return catalogue.Sample{Time: p.Time, Err: strings.TrimSpace("recording "+c.rec.path) + ": " + err.Error()}
	}
	if p.Err != "" || p.Body == nil {
		// The recording keeps the scraper's words, and they say a late
		// answer apart.
		return catalogue.Sample{Time: p.Time, Err: p.Err, TimedOut: httperr.IsNoAnswer(p.Err)}
	}
	if c.ingesters[t] == nil {
		c.ingesters[t] = page.NewIngester()
	}
	s, err := c.ingesters[t].Ingest(p.Body, p.ContentType)
	if err != nil {
		s = catalogue.Sample{Err: err.Error()}
	}
	s.Time = p.Time
	return s
}

// content decodes frame i of target t, decoding from its key frame when
// the frame before it is not the one decoded last.
func (c *Cursor) content(t, i int) ([]byte, error) {
	last := &c.last[t]
	if last.index == i {
		return last.content, nil
	}
	from := i
	if last.index != i-1 || i == 0 {
		for from > 0 && c.rec.frames[t][from].flags&flagKey == 0 {
			from--
		}
	}
	for k := from; k <= i; k++ {
		if err := c.decode(t, k); err != nil {
			c.forget(t)
			return nil, err
		}
	}
	return last.content, nil
}

// buffer returns an empty buffer of capacity n, the spare one when it
// has room (DecodeAll decodes no further than the capacity).
func (c *Cursor) buffer(n int) []byte {
	if cap(c.spare) >= n {
		b := c.spare[:0:n]
		c.spare = nil
		return b
	}
	return make([]byte, 0, n)
}

// forget drops the decoded content of target t.
func (c *Cursor) forget(t int) {
	last := &c.last[t]
	if last.held {
		c.held -= len(last.content)
	}
	if cap(last.content) > cap(c.spare) {
		c.spare = last.content[:0]
	}
	*last = decoded{index: -1}
	if c.loose == t {
		c.loose = -1
	}
}

// keep makes out, frame k of target t, the target's newest content: held
// while the contents held stay within heldCap, else loose, dropped once
// another target's frame is decoded. So a fleet whose pages pass the
// bound keeps decoding the targets it holds from their previous frame,
// and only the others from their key frame.
func (c *Cursor) keep(t, k int, out []byte) {
	if c.loose >= 0 && c.loose != t {
		c.forget(c.loose)
	}
	c.forget(t)
	c.last[t] = decoded{index: k, content: out}
	if c.held+len(out) <= c.rec.limits.heldCap() {
		c.last[t].held = true
		c.held += len(out)
	} else {
		c.loose = t
	}
}

// decode decodes frame k of target t into c.last[t], whose content is
// its dictionary when k is not a key frame.
func (c *Cursor) decode(t, k int) error {
	f := c.rec.frames[t][k]
	h, err := c.read(f)
	if err != nil {
		return err
	}
	last := &c.last[t]
	dict := []byte{0}
	if f.flags&flagKey == 0 {
		if last.index != k-1 {
			return fmt.Errorf("frame %d: %w", f.seq, errDecode)
		}
		dict = last.content
	}
	if h.rawLen > c.rec.limits.pageCap() {
		return c.rec.limits.tooLarge(f.seq, c.rec.Header.Targets[t].Name, uint64(h.rawLen))
	}
	if err := c.dec.ResetWithOptions(nil, zstd.WithDecoderDictRaw(0, dict)); err != nil {
		return err
	}
	out, err := c.dec.DecodeAll(c.raw[h.zst:], c.buffer(h.rawLen))
	switch {
	case errors.Is(err, zstd.ErrDecoderSizeExceeded):
		return fmt.Errorf("frame %d decodes to more than the %d bytes it states: %w", f.seq, h.rawLen, errDecode)
	case err != nil || len(out) != h.rawLen:
		return fmt.Errorf("frame %d: %w", f.seq, errDecode)
	}
	c.keep(t, k, out)
	return nil
}
