// Command install puts the npm programs the MCP tests run into the cache
// folder (mcptest.Dir), for CI to do once before the tests.
package main

import (
	"fmt"
	"os"

	"github.com/switchboardhq/switchboard/internal/mcptest"
)

func main() {
	dir, err := mcptest.Dir()
	if err == nil {
		err = mcptest.Install(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "install:", err)
		os.Exit(1)
	}
	fmt.Println("installed", mcptest.Packages, "into", dir)
}
