package record

import (
	"bytes"
	"slices"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
)

// Keep appends to dst the lines of page that the page parser reads: the
// samples of the families in catalogue.Reads and their # TYPE lines,
// byte for byte and in page order, plus "# EOF" lines. Ingesting the
// result gives the same sample as ingesting the page: the parser drops
// everything else before parsing. One more line is kept when needed for
// that: the first line that names a vllm: family, when no kept line does
// (it tells a vLLM page without the families vtop reads from another
// exporter).
func Keep(dst, page []byte) []byte {
	var firstVLLM []byte
	keptVLLM := false
	for len(page) > 0 {
		line, rest := cutLineKeepEOL(page)
		page = rest
		name, keep := keepLine(trimEOL(line))
		isVLLM := bytes.HasPrefix(name, vllmPrefix)
		if keep {
			dst = append(dst, line...)
			keptVLLM = keptVLLM || isVLLM
		} else if isVLLM && firstVLLM == nil {
			firstVLLM = line
		}
	}
	if !keptVLLM && firstVLLM != nil {
		if n := len(dst); n > 0 && dst[n-1] != '\n' {
			dst = append(dst, '\n') // the page's last line lacked one; the parser ignores this marker's
		}
		dst = append(dst, trimEOL(firstVLLM)...)
		dst = append(dst, '\n')
	}
	return dst
}

var (
	vllmPrefix = []byte("vllm:")
	eofLine    = []byte("# EOF")
)

// keepLine reports whether the parser reads line, and the metric name it
// names (if any), which tells whether the page is a vLLM page.
func keepLine(line []byte) (name []byte, keep bool) {
	if len(line) == 0 {
		return nil, false
	}
	if line[0] == '#' {
		return keepComment(line)
	}
	name = page.SampleName(line)
	_, keep = catalogue.LookupSample(name)
	return name, keep
}

// keepComment keeps # TYPE lines of the families read (under their text
// or OpenMetrics names) and # EOF; it names the family of # HELP and
// # TYPE lines.
func keepComment(line []byte) (name []byte, keep bool) {
	if bytes.Equal(bytes.TrimSpace(line), eofLine) {
		return nil, true
	}
	keyword, rest := page.NextField(line[1:])
	if string(keyword) != "TYPE" && string(keyword) != "HELP" {
		return nil, false
	}
	name, rest = page.NextField(rest)
	if string(keyword) != "TYPE" {
		return name, false
	}
	if _, ok := catalogue.LookupFamily(name); ok {
		return name, true
	}
	// OpenMetrics names counters and infos without their sample suffix.
	typ, _ := page.NextField(rest)
	switch string(typ) {
	case "counter":
		_, keep = catalogue.LookupFamily(append(slices.Clip(name), "_total"...))
	case "info":
		_, keep = catalogue.LookupFamily(append(slices.Clip(name), "_info"...))
	}
	return name, keep
}

// cutLineKeepEOL splits off the first line with its newline, if any.
func cutLineKeepEOL(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i+1], b[i+1:]
	}
	return b, nil
}

// trimEOL takes "\n" or "\r\n" off a line.
func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'})
}
