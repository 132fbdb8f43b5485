// Package page reads a /metrics page: bytes and a Content-Type in, one
// catalogue.Sample out, with no HTTP and no clock. A pre-filter keeps only
// the families the catalogue's alias table names, whichever engine wrote
// them (rewriting OpenMetrics to the text format on the way), a fast
// parser reads what it keeps (expfmt when the fast parser does not follow
// a line), a page of the last page's shape is read as values only
// (memo.go), and the builder hands every series to catalogue.Accumulator
// (which sums engines and derives what an engine's page lacks, by the
// rules every source shares), tells which engine or router wrote the page
// and interns what repeats. Every string it returns is safe to draw.
package page
