package page

import (
	"bytes"

	"github.com/vtop-dev/vtop/catalogue"
)

// Keep appends to dst the lines of body that Ingest reads: the samples of
// the families in catalogue.Reads and their # TYPE lines, byte for byte
// and in page order, plus "# EOF" lines. Ingesting the result gives the
// same sample as ingesting the page, as the filter chooses its lines by
// the same rules (keptSample, keptType); the format of the page need not
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

// keepLine reports whether Ingest reads line, and the metric name it names
// (if any), which tells whether the page is a vLLM page.
func keepLine(line []byte) (name []byte, keep bool) {
	line = skipBlanks(line)
	switch {
	case len(line) == 0:
		return nil, false
	case line[0] != '#':
		name = SampleName(line)
		_, keep = keptSample(name)
		return name, keep
	case bytes.Equal(trimBlanks(line), eofMarker):
		return nil, true
	}
	keyword, rest := NextField(line[1:])
	if string(keyword) != "TYPE" && string(keyword) != "HELP" {
		return nil, false
	}
	name, rest = NextField(rest)
	if string(keyword) != "TYPE" {
		return name, false
	}
	// The page's format is not known: a TYPE line is kept when either
	// format's reading keeps it.
	typ, _ := NextField(rest)
	_, _, keep = keptType(name, string(typ), false)
	if !keep {
		_, _, keep = keptType(name, string(typ), true)
	}
	return name, keep
}

// keptSample reports whether the filter keeps the sample lines of a
// metric name, and the row of the alias table that reads them.
func keptSample(name []byte) (row int, ok bool) { return catalogue.LookupSample(name) }

// keptType reports whether the filter keeps the "# TYPE name typ" line of
// a page (om: OpenMetrics), with the row of the alias table that reads the
// family and its type in the text format's terms.
func keptType(name []byte, typ string, om bool) (row int, textType string, ok bool) {
	if om {
		var n string
		n, typ = openMetricsType(string(name), typ)
		name = []byte(n)
	}
	switch typ {
	case "counter", "gauge", "histogram", "summary", "untyped":
	default:
		typ = "untyped"
	}
	row, ok = catalogue.LookupFamily(name)
	return row, typ, ok
}

// openMetricsType maps an OpenMetrics family to the text format's name and
// type: counters and infos are named without their sample suffix there.
func openMetricsType(name, typ string) (string, string) {
	switch typ {
	case "counter":
		return name + "_total", typ
	case "info":
		return name + "_info", "gauge"
	case "unknown", "stateset":
		return name, "gauge"
	}
	return name, typ
}

// trimEOL takes "\n" or "\r\n" off a line.
func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'})
}
