// Package testutil holds what the tests of several packages share: real
// vLLM pages rendered by client_golang from the catalogue, small HTTP
// servers, a closed port, a virtual clock and a simulated fleet on loopback.
// Only tests import it.
package testutil
