// Package gomodzip checks the repository's Go modules as the module proxy
// would serve them: its test builds each module's zip (golang.org/x/mod/zip,
// the code the go command and the proxy use) from the module's directory
// and checks what the zip holds, the license above all, which pkg.go.dev
// needs to show a module's documentation.
//
// It is a module of its own so that the modules it checks need nothing
// beyond their own dependencies: run it with
//
//	cd tools/gomodzip && go test ./...
package gomodzip
