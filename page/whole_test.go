package page

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/safetext"
)

// wholeHead is the start of a page that reads running = 3.
const wholeHead = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 3\n"

const omType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

// checkRefusal fails unless err is a refusal whose text starts with want
// and is safe to draw: every page the parser refuses says why, and where.
func checkRefusal(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("page accepted, want an error starting %q", want)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, want) || !safetext.IsSafe(msg) {
		t.Errorf("error %q, want a safe text starting %q", msg, want)
	}
}

// A page cut mid-line is refused wherever the cut falls: a text-format
// page ends with a newline, an OpenMetrics page with # EOF. A live server
// never sends less; a shorter body is a connection that died or a body
// limit that bit.
func TestIngestRefusesCutPages(t *testing.T) {
	omNoEOF := strings.TrimSuffix(omPage, "# EOF\n")
	tests := []struct {
		name, page, contentType, want string
	}{
		{"inside a sample line vtop reads", wholeHead + "vllm:num_requests_waiting{model_name=\"m\"} 1", "text/plain", ""},
		{"inside the value of the last line", wholeHead + "vllm:num_requests_running{model_name=\"n\"} 12", "text/plain", ""},
		{"inside the name of a family vtop does not read", wholeHead + "process_open_fd", "text/plain", ""},
		{"inside a label value of a family vtop does not read", wholeHead + "python_gc_objects_collected_total{generation=\"", "", ""},
		{"inside a HELP line", wholeHead + "# HELP vllm:p", "text/plain", ""},
		{"OpenMetrics cut mid-line", omPage[:len(omPage)/2], omType, ""},
		{"OpenMetrics cut on a line end, no # EOF", omNoEOF, omType, fmt.Sprintf("page cut at byte %d: no # EOF", len(omNoEOF))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == "" {
				tt.want = fmt.Sprintf("page cut mid-line at byte %d", len(tt.page))
			}
			_, err := NewIngester().Ingest([]byte(tt.page), tt.contentType)
			checkRefusal(t, err, tt.want)
		})
	}
}

// Whole pages are not taken for cut ones.
func TestIngestAcceptsWholePages(t *testing.T) {
	tests := []struct {
		name, page, contentType string
	}{
		{"ends with a newline", wholeHead, "text/plain"},
		{"ends with a blank line", wholeHead + "\n", "text/plain"},
		{"ends with blanks, as expfmt allows", wholeHead + "  \t", "text/plain"},
		{"CRLF line ends", strings.ReplaceAll(wholeHead, "\n", "\r\n"), "text/plain"},
		{"OpenMetrics # EOF without a final newline", wholeHead + "# EOF", omType},
		{"OpenMetrics sniffed by its # EOF", wholeHead + "# EOF\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewIngester().Ingest([]byte(tt.page), tt.contentType)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Total.Scalars[catalogue.Running]; got != 3 {
				t.Errorf("running %v, want 3", got)
			}
		})
	}
}

// A line that is neither a comment, a blank line nor a sample line fails
// the page, as it fails a Prometheus scrape, even in a family vtop drops
// unparsed: the error names the line of the page.
func TestIngestRefusesGarbageLines(t *testing.T) {
	tests := []struct {
		name, page, contentType string
		line                    int
	}{
		{"words", "hello world\n", "text/plain", 1},
		{"escape sequences after good lines", wholeHead + "python_gc_objects_collected_total{generation=\"0\"} 1\n\x1b[2J\x1b]0;pwned\x07 502 Bad Gateway\n", "text/plain", 4},
		{"binary", wholeHead + "\x00\xff\xfe\n", "", 3},
		{"indented words", wholeHead + "  hello world\n", "", 3},
		{"value not a number", "process_open_fds many\n" + wholeHead, "", 1},
		{"hex float, which Prometheus refuses", "process_open_fds 0x1p3\n", "", 1},
		{"underscore in a number, which Prometheus refuses", "process_open_fds 1_000\n", "", 1},
		{"name with a dash", "process-open-fds 1\n", "", 1},
		{"no value", wholeHead + "process_open_fds\n", "", 3},
		{"no blank before the value", "process_open_fds{a=\"1\"}1\n", "", 1},
		{"label set not closed", "process_open_fds{a=\"1\" 1\n", "", 1},
		{"malformed line of a family vtop does not read", "vllm:iteration_tokens_total_bucket{le=\"1\" oops\nvllm:num_requests_waiting 4\n", "", 1},
		{"timestamp not an integer", "process_open_fds 1 17.5\n", "text/plain", 1},
		{"text after the timestamp", "process_open_fds 1 1700000000000 x\n", "", 1},
		{"exemplar on a text page", "process_open_fds 1 # {a=\"b\"} 1\n", "text/plain", 1},
		{"garbage in an OpenMetrics page", wholeHead + "<html>\n# EOF\n", omType, 3},
		{"garbage in a line vtop reads", wholeHead + "vllm:num_requests_waiting{model_name=\"m\"} lots\n", "", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewIngester().Ingest([]byte(tt.page), tt.contentType)
			checkRefusal(t, err, fmt.Sprintf("parse error at line %d: ", tt.line))
		})
	}
}

// The shape check on dropped lines accepts every form of the text format
// and of OpenMetrics, so it refuses no page Prometheus would take.
func TestIngestAcceptsEverySampleShape(t *testing.T) {
	tests := []struct {
		name, line, contentType string
	}{
		{"plain", "process_open_fds 12", ""},
		{"labels", "python_info{implementation=\"CPython\",major=\"3\"} 1", ""},
		{"brace, hash and escaped quote inside a label value", "python_info{a=\"x}\\\" # y\",b=\"\"} 1", ""},
		{"trailing comma in the label set", "python_info{a=\"x\",} 1", ""},
		{"blanks around", "  process_open_fds \t 12 \t", ""},
		{"timestamp", "process_open_fds 12 1700000000000", ""},
		{"negative timestamp", "process_open_fds 12 -5", ""},
		{"special values", "a NaN\nb +Inf\nc -Inf\nd -0.5e-3\ne .5\nf 1E6\ng inf", ""},
		{"quoted UTF-8 name", "{\"my.metric\",a=\"1\"} 1", ""},
		{"comments", "#\n#no space\n# TYPE x bogus\n# \x01 anything", ""},
		{"blank line of spaces", "   ", ""},
		{"OpenMetrics exemplar", "foo_bucket{le=\"1\"} 1 # {trace_id=\"x\"} 0.5 123.4", omType},
		{"OpenMetrics float timestamp", "foo_total 1 1700000000.5", omType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := wholeHead + tt.line + "\n"
			if tt.contentType == omType {
				page += "# EOF\n"
			}
			s, err := NewIngester().Ingest([]byte(page), tt.contentType)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Total.Scalars[catalogue.Running]; got != 3 {
				t.Errorf("running %v, want 3", got)
			}
		})
	}
}

// Every refusal says what is wrong and where, in text safe to draw: what
// the DOWN pane shows is all an on-call engineer has to go on.
func TestEveryRefusalSaysWhatAndWhere(t *testing.T) {
	pages := []struct{ name, page, contentType string }{
		{"empty", "", "text/plain"},
		{"HTML", "<html>\x1b[2J</html>\n", ""},
		{"JSON", "{\"a\":1}\n", ""},
		{"protobuf", "\x00\x01", "application/vnd.google.protobuf"},
		{"cut", wholeHead + "vllm:num_requests_waiting 1", ""},
		{"no # EOF", wholeHead, omType},
		{"garbage", wholeHead + "\x1b]0;pwned\x07\n", ""},
		{"bad value in a line vtop reads", wholeHead + "vllm:num_requests_waiting \x1b[2J\n", ""},
		{"bad label value in a line vtop reads", "vllm:num_requests_waiting{model_name=\"\xff\"} 1\n", ""},
		{"bad le in a histogram vtop reads", "# TYPE vllm:time_to_first_token_seconds histogram\nvllm:time_to_first_token_seconds_bucket{le=\"x\"} 1\n", ""},
	}
	for _, tt := range pages {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewIngester().Ingest([]byte(tt.page), tt.contentType)
			if err == nil || err.Error() == "" || !safetext.IsSafe(err.Error()) || !saysWhere(err) {
				t.Errorf("error %v: want a safe text that names the problem and where", err)
			}
		})
	}
}
