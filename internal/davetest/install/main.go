// Command install puts @snazzah/davey, the other party of the Discord
// voice encryption tests, into its cache folder (davetest.Dir), for CI to
// do once before the tests.
package main

import (
	"fmt"
	"os"

	"github.com/switchboardhq/switchboard/internal/davetest"
)

func main() {
	dir, err := davetest.Dir()
	if err == nil {
		err = davetest.Install(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "install:", err)
		os.Exit(1)
	}
	fmt.Println("installed", davetest.Package, "into", dir)
}
