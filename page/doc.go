// Package page reads a /metrics page: bytes and a Content-Type in, one
// catalogue.Sample out, with no HTTP and no clock. One pass over the
// page's lines (parse.go) keeps only the families the catalogue's alias
// table names, whichever engine wrote them (rewriting OpenMetrics to the
// text format on the way), and parses each line it keeps as it meets it
// (expfmt reads the page when the fast parser does not follow a line); a
// page of the last page's shape is read as values only (memo.go), and the
// builder hands every series to catalogue.Accumulator
// (which sums engines and derives what an engine's page lacks, by the
// rules every source shares), tells which engine or router wrote the page
// and interns what repeats. Every string it returns is safe to draw.
package page
