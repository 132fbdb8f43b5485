package record

// Tick records one evaluation whose cuts the caller knows: Tap's, beside a
// live monitor, or those of a recording written from stored samples (the
// past of a Prometheus server). Each cut names frames already given to
// Page. It does nothing once the recording has stopped.
func (r *Recorder) Tick(t Tick) {
	if r.Stopped() {
		return
	}
	payload := appendTick(nil, t, r.start)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = appendRecord(r.buf[:0], kindTick, payload)
	_ = r.writeLocked(r.buf)
}
