package promsource

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/vtop-dev/vtop/httperr"
	"github.com/vtop-dev/vtop/safetext"
)

// problem describes a failed query in a few words a person acts on. It
// never includes the request URL or its credentials (not even those the
// server echoed: safetext.Sanitize hides them), and is safe to draw.
func problem(err error, timeout time.Duration) string {
	var apiErr *v1.Error
	if errors.As(err, &apiErr) {
		return apiProblem(apiErr)
	}
	if errors.Is(err, errTooLarge) {
		return "the answer is larger than the cap; narrow the selector"
	}
	return safetext.Sanitize(httperr.Describe(err, timeout))
}

// apiProblem describes an error the query API answered with.
func apiProblem(e *v1.Error) string {
	first, _, _ := strings.Cut(e.Msg, "\n")
	msg := safetext.Sanitize(first)
	switch e.Type {
	case v1.ErrBadData:
		return "Prometheus rejected the query: " + msg
	case v1.ErrTimeout:
		return "the query timed out in Prometheus: " + msg
	case v1.ErrCanceled, v1.ErrExec:
		return "the query failed in Prometheus: " + msg
	case v1.ErrServer, v1.ErrClient:
		return statusProblem(e)
	}
	// ErrBadResponse: a 2xx answer that is not the query API's JSON.
	if strings.Contains(e.Msg, "invalid character '<'") {
		return "not a Prometheus query API: the server answered HTML (check the URL and its path prefix)"
	}
	return "not a Prometheus query API: " + msg
}

// statusProblem describes an HTTP error status, with a hint for the ones
// that have an obvious cause.
func statusProblem(e *v1.Error) string {
	_, codeText, _ := strings.Cut(e.Msg, ": ") // "server error: 503"
	code, err := strconv.Atoi(codeText)
	p := "HTTP " + codeText
	if err == nil {
		p = httperr.Status(code)
	}
	switch code {
	case 401, 403:
		return p + ": not authorized (check the bearer token, basic auth or tenant header)"
	case 404:
		return p + ": no Prometheus query API at this URL (check its path prefix)"
	}
	if d := detail(e.Detail); d != "" {
		// Prometheus's bodies often begin with the status text again.
		p += ": " + strings.TrimPrefix(d, http.StatusText(code)+": ")
	}
	return p
}

// detail is the first line of an error body when it is short text,
// without secrets.
func detail(body string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(body), "\n")
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '<' {
		return ""
	}
	line = safetext.Sanitize(line)
	if r := []rune(line); len(r) > 100 {
		return string(r[:100]) + "…"
	}
	return line
}

// displayURL is the server's URL as shown: without user info or query.
func displayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "Prometheus"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return safetext.Sanitize(u.String())
}
