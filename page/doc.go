// Package page reads a /metrics page: bytes and a Content-Type in, one
// catalogue.Sample out, with no HTTP and no clock. A pre-filter keeps only
// the families the catalogue's alias table names, whichever engine wrote
// them (rewriting OpenMetrics to the text format on the way), the label
// stripper (strip.go) takes model_name and engine off the lines when that
// provably changes nothing, expfmt parses what is left, and the builder
// sums engines, reads the newest vLLM signals (signals.go), derives what
// an engine's page lacks, tells which engine or router wrote the page and
// interns what repeats. Every string it returns is safe to draw.
package page
