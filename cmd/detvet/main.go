package main

import (
	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/codegenie/codegenie/detvet"
)

func main() { singlechecker.Main(detvet.Analyzer) }
