package record

import (
	"time"

	"github.com/vtop-dev/vtop/analysis"
)

// Header opens a recording: what was recorded and how. It is stored as
// JSON in the first record, so fields can be added without a new format
// version; a reader ignores fields it does not know.
type Header struct {
	// Format is the file format version (also in the file's prefix).
	Format int `json:"format"`
	// Vtop is the version of the vtop that recorded.
	Vtop string `json:"vtop"`
	// Start is when the recording began; frame and tick times are stored
	// as offsets from it.
	Start time.Time `json:"start"`
	// Interval is the scrape interval.
	Interval time.Duration `json:"interval_ns"`
	// Targets are the targets in recording order; frames name them by
	// index.
	Targets []Target `json:"targets"`
	// Args are the command-line arguments of the recording vtop, as given
	// (credentials never are: vtop takes them from files).
	Args []string `json:"args,omitempty"`
	// All is true when whole pages were kept (--record-all), false when
	// only the families vtop reads were.
	All bool `json:"record_all"`
	// KeyEvery is how many frames of a target go between two key frames.
	KeyEvery int `json:"key_every"`
	// Config is the analysis configuration of live mode; the window of
	// each report is in its tick.
	Config analysis.Config `json:"analysis"`
}

// Target is one recorded target.
type Target struct {
	// Name is the target as vtop names it (host:port): the replica's name
	// in reports and the instance label of an export.
	Name string `json:"name"`
	// URL is the address scraped.
	URL string `json:"url"`
}
