module github.com/fastnow/fastnow/go/adapters

go 1.23

require (
	github.com/fastnow/fastnow/go v0.1.0
	github.com/rs/zerolog v1.35.1
	go.uber.org/zap v1.28.0
)

require (
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	golang.org/x/sys v0.29.0 // indirect
)

// In this repository the adapters build against the core beside them. Go
// applies a replace directive only in the main module, so a program that
// requires the adapters gets the core at the version required above.
replace github.com/fastnow/fastnow/go => ../
