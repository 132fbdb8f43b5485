package catalogue

import "testing"

// A figure that a read changes is not read: llama.cpp's rate gauges
// (b4747) cover only the time since the previous read of /metrics by
// anyone, so two scrapers see each other's resets; its rates come from
// its counters.
func TestFamiliesAReadChangesAreNotRead(t *testing.T) {
	for _, name := range []string{"llamacpp:prompt_tokens_seconds", "llamacpp:predicted_tokens_seconds"} {
		for i := range Reads {
			if Reads[i].Name == name {
				t.Errorf("%s is read (%+v): every read resets it", name, Reads[i])
			}
		}
	}
}
