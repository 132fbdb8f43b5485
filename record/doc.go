// Package record keeps the evidence of a watch: every scrape of every
// target, appended to one self-contained file as it happens, compact
// enough to leave running for a day and safe against a crash. A Recorder
// writes (it takes scrape.Poller's OnPage hook and monitor.Monitor's Tap),
// Parse and Open read back what is intact and say what was lost, and a
// Cursor turns frames back into the samples the live poller produced.
//
// The file format is described in FORMAT.md beside this file.
package record
