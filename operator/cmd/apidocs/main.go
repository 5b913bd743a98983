// Command apidocs writes the API reference (docs/api.md) from operator/api/v1alpha1: `make api-docs`.
package main

import (
	"fmt"
	"os"

	"github.com/zns-mysql/zns-mysql/operator/internal/apidocs"
)

func main() {
	dir := "operator/api/v1alpha1"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	out, err := apidocs.Generate(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apidocs:", err)
		os.Exit(1)
	}
	fmt.Print(out)
}
