" Unified Sketch files (akg).
autocmd BufRead,BufNewFile *.sketch setfiletype sketch
