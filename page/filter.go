package page

import (
	"bytes"

	"github.com/vtop-dev/vtop/catalogue"
)

// Keep appends to dst the lines of body that Ingest reads: the samples of
// the families in catalogue.Reads and their # TYPE lines, byte for byte
// and in page order, plus "# EOF" lines. Ingesting the result gives the
// same sample as ingesting the page, as the filter chooses its lines by
// the same rules (catalogue.LookupSample, keptType); the format of the page need not
// be known. One more line is kept when needed for that: the first line
// that names a vllm: family, when no kept line does (it tells a vLLM page
// without the families vtop reads from another exporter).
func Keep(dst, body []byte) []byte {
	var firstVLLM []byte
	keptVLLM := false
	for len(body) > 0 {
		line, rest := body, []byte(nil)
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, rest = body[:i+1], body[i+1:]
		}
		body = rest
		isVLLM, keep := keepLine(trimEOL(line))
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

// keepLine reports whether Ingest reads line, and whether the line names
// a vllm: family, which tells a vLLM page. It reads a line as the
// filter's pass does (catalogue.LookupSample, readComment, keptType).
func keepLine(line []byte) (isVLLM, keep bool) {
	line = skipBlanks(line)
	switch {
	case len(line) == 0:
		return false, false
	case line[0] != '#':
		name := SampleName(line)
		_, keep = catalogue.LookupSample(name)
		return bytes.HasPrefix(name, vllmPrefix), keep
	case bytes.Equal(trimBlanks(line), eofMarker):
		return false, true
	}
	c := readComment(line)
	if !c.isType {
		return c.isVLLM, false
	}
	// The page's format is not known: a TYPE line is kept when either
	// format's reading keeps it.
	_, _, keep = keptType(c.name, string(c.typ), false)
	if !keep {
		_, _, keep = keptType(c.name, string(c.typ), true)
	}
	return c.isVLLM, keep
}

// trimEOL takes "\n" or "\r\n" off a line.
func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'})
}
