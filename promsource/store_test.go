package promsource

import (
	"net/http"
	"testing"
)

// TestIdentify reads the build information of each store as it answers
// (Prometheus 2.42 and VictoriaMetrics 1.79 as captured from Debian's
// packages; Mimir's as its API documents it) and what is no answer.
func TestIdentify(t *testing.T) {
	vmHeader := http.Header{"X-Server-Hostname": {"vm"}}
	tests := []struct {
		name   string
		status int
		header http.Header
		body   string
		want   storeIdentity
		ok     bool
	}{
		{"Prometheus", 200, nil,
			`{"status":"success","data":{"version":"2.42.0+ds","revision":"2.42.0+ds-5+deb12u1","branch":"debian/sid","buildUser":"team+pkg-go@tracker.debian.org","buildDate":"20240202-10:32:02","goVersion":"go1.19.8"}}`,
			storeIdentity{name: StorePrometheus, version: "2.42.0+ds"}, true},
		{"VictoriaMetrics without a version", 200, vmHeader, `{"status":"success","data":{}}`,
			storeIdentity{name: StoreVictoriaMetrics}, true},
		{"VictoriaMetrics imitating Prometheus 2.24", 200, vmHeader, `{"status":"success","data":{"version":"2.24.0"}}`,
			storeIdentity{name: StoreVictoriaMetrics}, true},
		{"VictoriaMetrics refusing the path", 400, vmHeader, `unsupported path`,
			storeIdentity{name: StoreVictoriaMetrics}, true},
		{"Grafana Mimir", 200, nil, `{"status":"success","data":{"application":"Grafana Mimir","version":"2.14.0","revision":"abc","branch":"","goVersion":"go1.22"}}`,
			storeIdentity{name: StoreMimir, version: "2.14.0"}, true},
		{"a proxy's 404", 404, nil, `404 page not found`, storeIdentity{}, false},
		{"no version", 200, nil, `{"status":"success","data":{}}`, storeIdentity{}, false},
		{"an error answer", 200, nil, `{"status":"error","error":"nope"}`, storeIdentity{}, false},
		{"a version with control characters", 200, nil, "{\"status\":\"success\",\"data\":{\"version\":\"2.5\\u001b[31m\"}}",
			storeIdentity{name: StorePrometheus, version: "2.5"}, true}, // the escape sequence stripped
	}
	for _, tt := range tests {
		h := tt.header
		if h == nil {
			h = http.Header{}
		}
		got, ok := identify(tt.status, h, []byte(tt.body))
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: %+v %v, want %+v %v", tt.name, got, ok, tt.want, tt.ok)
		}
		if (got.note() != "") != (got.name == StoreVictoriaMetrics) {
			t.Errorf("%s: note %q: want one for VictoriaMetrics only", tt.name, got.note())
		}
	}
}
