//go:build !linux

package blocktrace

// Tracer is a running capture; only Linux has one.
type Tracer struct{}

// Start needs Linux's tracefs.
func Start(Options, func(Event)) (*Tracer, error) { return nil, ErrUnsupported }

// Dev is the device traced.
func (t *Tracer) Dev() Dev { return Dev{} }

// Instance is the tracing instance's directory.
func (t *Tracer) Instance() string { return "" }

// Stop ends the capture.
func (t *Tracer) Stop() (Totals, error) { return Totals{}, ErrUnsupported }
