-- Headless Neovim end-to-end test of the akg plugin against the real akg-lsp.
--
-- Env: AKG_LSP (server binary), AKG_REF (a reference operator to copy into a
-- fresh workspace), AKG_EXPECT ("pass": a kernel is generated; "fail": the job
-- fails and an error diagnostic appears), AKG_PYTHON, AKG_JOB_TIMEOUT (s).
-- Run by tests/editors/CMakeLists.txt:
--   nvim --headless -u NONE -i NONE --cmd 'set rtp^=editor-clients/neovim' -c 'luafile e2e.lua'
local function log(...)
  io.stderr:write('[nvim-e2e] ' .. string.format(...) .. '\n')
end

local function env(name, default)
  local v = os.getenv(name)
  if v == nil or v == '' then
    return default
  end
  return v
end

local function check(cond, fmt, ...)
  if not cond then
    error(string.format(fmt, ...), 2)
  end
end

local function run()
  local server = env('AKG_LSP')
  local ref_src = env('AKG_REF')
  local expect = env('AKG_EXPECT', 'pass')
  local timeout_ms = tonumber(env('AKG_JOB_TIMEOUT', '120')) * 1000
  check(server and vim.fn.executable(server) == 1, 'AKG_LSP must name the akg-lsp binary, got %s', tostring(server))
  check(ref_src and vim.fn.filereadable(ref_src) == 1, 'AKG_REF must name a reference, got %s', tostring(ref_src))

  -- A fresh workspace (the server only runs references inside its folders).
  local tmp = vim.fn.tempname()
  local ws = tmp .. '/ws'
  vim.fn.mkdir(ws, 'p')
  local ref = ws .. '/' .. vim.fn.fnamemodify(ref_src, ':t')
  vim.fn.writefile(vim.fn.readfile(ref_src, 'b'), ref, 'b')
  vim.fn.mkdir(ws .. '/.akg', 'p') -- root marker: the workspace folder is ws
  vim.env.HOME = tmp

  vim.cmd('filetype plugin on')
  vim.cmd('syntax on')
  local akg = require('akg')
  akg.setup({
    server_path = server,
    targets = { 'cpu/cpp' },
    python = env('AKG_PYTHON'),
    store_path = tmp .. '/store.db',
    progress = 'echo',
    open_kernel = 'split',
  })

  local finished_events = 0
  vim.api.nvim_create_autocmd('User', {
    pattern = 'AkgJobFinished',
    callback = function()
      finished_events = finished_events + 1
    end,
  })

  vim.cmd('edit ' .. vim.fn.fnameescape(ref))
  local buf = vim.api.nvim_get_current_buf()
  check(vim.bo[buf].filetype == 'python', 'filetype python, got %q', vim.bo[buf].filetype)
  check(akg.is_reference(buf), '%s is detected as a reference', ref)
  local attached = vim.wait(15000, function()
    local c = akg.client(buf)
    return c ~= nil and c.initialized == true
  end, 50)
  check(attached, 'the akg client attached and initialized')
  local client = akg.client(buf)
  check(client.config.root_dir == ws, 'workspace folder %s, got %s', ws, tostring(client.config.root_dir))
  log('attached: client %d, server %s', client.id, server)

  -- A Python file that is not a reference gets no client.
  local plain = ws .. '/helper.py'
  vim.fn.writefile({ 'def helper():', '    return 1' }, plain)
  vim.cmd('edit ' .. vim.fn.fnameescape(plain))
  check(akg.client(0) == nil, 'a plain Python file gets no akg client')
  vim.cmd('buffer ' .. buf)

  -- Code actions: one generate per target, design.
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } },
    context = { diagnostics = {} },
  }
  local responses = vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', params, 10000)
  local commands = {}
  for _, r in pairs(responses or {}) do
    for _, a in ipairs(r.result or {}) do
      local c = a.command or {}
      commands[#commands + 1] = c.command
      if c.command == 'akg.generate' then
        local arg = c.arguments[1]
        check(arg.backend == 'cpu' and arg.dsl == 'cpp', 'generate action for cpu/cpp, got %s', vim.inspect(arg))
      end
    end
  end
  check(vim.tbl_contains(commands, 'akg.generate'), 'code actions include akg.generate: %s', vim.inspect(commands))
  check(vim.tbl_contains(commands, 'akg.designSketch'), 'code actions include akg.designSketch')
  log('code actions: %s', table.concat(commands, ', '))

  -- :AkgGenerate on the CPU backend, then wait for akg/jobFinished.
  vim.cmd('AkgGenerate cpu/cpp')
  local ok = vim.wait(timeout_ms, function()
    return akg.state.last_finished ~= nil and finished_events > 0
  end, 100)
  check(ok, 'akg/jobFinished within %d s', timeout_ms / 1000)
  local done = akg.state.last_finished
  log('job %s finished: %s', tostring(done.id), vim.inspect({ status = done.status, speedup = done.speedup, error = done.error }))
  check(done.uri == vim.uri_from_bufnr(buf), 'jobFinished names the reference')

  -- Progress reached the plugin (LspProgressUpdate on 0.7, LspProgress on 0.10+).
  local progress = require('akg.progress')
  local begins, ends = 0, 0
  for _, p in ipairs(progress.log) do
    if p.kind == 'begin' then
      begins = begins + 1
    elseif p.kind == 'end' then
      ends = ends + 1
    end
  end
  check(begins >= 1 and ends >= 1, 'progress begin and end seen (log: %s)', vim.inspect(progress.log))

  -- Diagnostics are published after the job: wait until they settle.
  vim.wait(2000, function()
    return false
  end, 100)
  local diags = vim.diagnostic.get(buf)
  log('diagnostics: %s', vim.inspect(vim.tbl_map(function(d)
    return { severity = d.severity, message = d.message }
  end, diags)))

  if expect == 'pass' then
    check(done.status == 'pass', 'status pass, got %s (%s)', tostring(done.status), vim.inspect(done.error))
    check(type(done.speedup) == 'number' and done.speedup > 0, 'a speedup, got %s', tostring(done.speedup))
    local kernel = done.paths.kernel
    check(type(kernel) == 'string' and vim.fn.filereadable(kernel) == 1, 'the kernel file exists: %s', tostring(kernel))
    check(vim.startswith(kernel, ws .. '/'), 'the kernel lies in the workspace: %s', kernel)
    -- The kernel buffer is open in a window (a split), the reference still current.
    local shown = vim.wait(5000, function()
      local kb = vim.fn.bufnr(kernel)
      if kb == -1 then
        return false
      end
      for _, w in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_win_get_buf(w) == kb then
          return true
        end
      end
      return false
    end, 50)
    check(shown, 'the kernel buffer is shown in a window')
    check(#vim.api.nvim_list_wins() >= 2, 'the kernel opened in a split')
    check(vim.api.nvim_get_current_buf() == buf, 'the cursor stays in the reference')
    local kernel_buf = vim.fn.bufnr(kernel)
    local first = table.concat(vim.api.nvim_buf_get_lines(kernel_buf, 0, -1, false), '\n')
    check(#first > 0, 'the kernel buffer has the kernel source')
    for _, d in ipairs(diags) do
      check(d.severity ~= vim.diagnostic.severity.ERROR, 'no error diagnostic on a passing reference: %s', d.message)
    end

    -- Hover on `class Model` carries the speedup.
    local line
    for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      if l:match('^class%s+Model') then
        line = i - 1
        break
      end
    end
    local hover = vim.lsp.buf_request_sync(buf, 'textDocument/hover', {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      position = { line = line, character = 7 },
    }, 10000)
    local text = ''
    for _, r in pairs(hover or {}) do
      if r.result and r.result.contents then
        local c = r.result.contents
        text = text .. (type(c) == 'string' and c or c.value or vim.inspect(c))
      end
    end
    log('hover: %s', text:sub(1, 400))
    check(text:match('%d+%.%d+x') ~= nil, 'the hover shows a speedup like 1.23x: %s', text)
    check(text:find(string.format('%.2fx', done.speedup), 1, true) ~= nil, 'the hover shows this job speedup %.2fx', done.speedup)

    -- :AkgReport opens report.json.
    vim.cmd('AkgReport')
    local report = done.paths.report
    local report_open = vim.wait(10000, function()
      return vim.fn.bufnr(report) ~= -1
    end, 50)
    check(report_open, 'the report %s opened', tostring(report))
  else
    check(done.status == 'fail' or done.status == 'error', 'status fail or error, got %s', tostring(done.status))
    check(type(done.error) == 'table' and done.error.class, 'an error class, got %s', vim.inspect(done.error))
    check(vim.fn.bufnr(done.paths and type(done.paths.kernel) == 'string' and done.paths.kernel or '/nonexistent') == -1
      or #vim.api.nvim_list_wins() == 1, 'no kernel opens for a failure')
    local found
    for _, d in ipairs(diags) do
      if d.severity == vim.diagnostic.severity.ERROR then
        found = d
      end
    end
    check(found ~= nil, 'an error diagnostic on the failing reference')
    check(found.source == 'akg', 'the diagnostic comes from akg, got %s', tostring(found.source))
    check(found.message:find(done.error.class, 1, true) or found.message:find('cpu/cpp', 1, true),
      'the diagnostic names the failure: %s', found.message)
    -- Where the error names a line of the reference, the diagnostic sits on it.
    local named = tonumber(tostring(done.error.detail):match(vim.fn.fnamemodify(ref, ':t'):gsub('%p', '%%%0') .. ':(%d+)'))
    if named then
      check(found.lnum + 1 == named, 'the diagnostic is on line %d, got %d', named, found.lnum + 1)
    end
    log('error diagnostic at line %d: %s', found.lnum + 1, found.message)
  end

  -- Clean stop.
  vim.lsp.stop_client(client.id)
  vim.wait(5000, function()
    return vim.lsp.client_is_stopped(client.id)
  end, 50)
  vim.fn.delete(tmp, 'rf')
end

local ok, err = xpcall(run, debug.traceback)
if ok then
  log('PASS')
  vim.cmd('qall!')
else
  log('FAIL: %s', tostring(err))
  vim.cmd('cquit 1')
end
