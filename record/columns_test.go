package record

import (
	"bytes"
	"testing"
)

func TestColumnsRoundTrip(t *testing.T) {
	cases := []string{
		"",
		"vllm:num_requests_running{model_name=\"m\"} 3\n",
		"# TYPE x gauge\nx 1\nx{a=\"b c\"} 2 1700000000\n",
		"no_newline 5",
		"trailing_space \nempty_value{a=\"b\"} \n",
		"crlf 1\r\n# HELP x y z\r\n",
		"nospace\n\n\n# comment 1\n",
		"\tleading_tab\t7\n",
		"x 1\n\x00\xff bytes \x01\n",
	}
	for _, c := range cases {
		keys, values := splitColumns(nil, nil, []byte(c))
		if got := joinColumns(nil, keys, values); !bytes.Equal(got, []byte(c)) {
			t.Errorf("%q came back as %q (keys %q values %q)", c, got, keys, values)
		}
	}
}

func FuzzColumns(f *testing.F) {
	f.Add([]byte("x 1\ny{a=\"b\"} 2\n# c d\n"))
	f.Fuzz(func(t *testing.T, page []byte) {
		keys, values := splitColumns(nil, nil, page)
		if got := joinColumns(nil, keys, values); !bytes.Equal(got, page) {
			t.Fatalf("%q came back as %q", page, got)
		}
		joinColumns(nil, values, keys) // damaged columns: no panic
	})
}
