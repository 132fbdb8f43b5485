package scrape

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"

	"github.com/vtop-dev/vtop/human"
)

// gzipMagic opens every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

// compressed reports whether body is a gzip stream the transport left
// compressed: a server that compresses although vtop asked a loopback
// server not to, with or without saying so in Content-Encoding.
func compressed(resp *http.Response, body []byte) bool {
	return !resp.Uncompressed && bytes.HasPrefix(body, gzipMagic)
}

// gunzip decompresses a gzip body, refusing one larger than limit once
// decompressed. The error is the problem as the user reads it.
func gunzip(body []byte, limit int64) ([]byte, error) {
	z, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, errors.New("gzip-compressed page does not decompress: " + err.Error())
	}
	out, err := readHeld(context.Background(), z, nil, limit, -1, nil)
	switch {
	case errors.Is(err, errTooLarge):
		return nil, errors.New("gzip-compressed page larger than " + human.Bytes(limit) + " once decompressed")
	case err != nil:
		return nil, errors.New("gzip-compressed page does not decompress: " + err.Error())
	}
	return out, nil
}
