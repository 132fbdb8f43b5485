// Package gpu holds the pure halves of the GPU readers: nvidia-smi CSV
// rows, dcgm-exporter pages, DCGM series from Prometheus and the PromQL
// that fetches them, each into the model of gpu/device. It does no I/O:
// the child process and the HTTP fetches live in gpu/collect.
package gpu
