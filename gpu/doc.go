// Package gpu holds the pure halves of the GPU readers: nvidia-smi CSV
// rows, dcgm-exporter pages and DCGM series from Prometheus (which
// promql.DCGMQuery asks for), each into the model of gpu/device. It does no I/O:
// the child process and the HTTP fetches live in gpu/collect.
package gpu
