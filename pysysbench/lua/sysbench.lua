-- pysysbench's sysbench 1.0.20 Lua API (written for pysysbench from the
-- behavioural spec; not sysbench's source).  Run in every Lua state before the
-- user's script, with the host table H (pysysbench/lua/state.py) as `...`.
--
-- Everything that waits for a database or a timer yields a request to the
-- Python host (coroutine.yield(OP, ...)), which awaits the driver and resumes
-- the coroutine with the answer; nothing here blocks the event loop.

local H = ...
local yield = coroutine.yield
local type, tostring, tonumber, error, pcall, select, setmetatable =
   type, tostring, tonumber, error, pcall, select, setmetatable
local floor, log, exp = math.floor, math.log, math.exp
local concat, sformat, sbyte, schar, ssub = table.concat, string.format, string.byte, string.char, string.sub

-- requests to the host: keep in step with state.py
local OP_EXEC, OP_QUERY, OP_PREPARE, OP_CONNECT, OP_DISCONNECT, OP_RECONNECT,
      OP_SLEEP, OP_CLOSE_STMT, OP_DRIVER, OP_NEXT_RESULT, OP_MORE_RESULTS = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11

-- the C stdout unbuffered (once a process would do; every state asks): a script's print and
-- io.write go out in step with the host's Python output, as in sysbench
if io and io.stdout then io.stdout:setvbuf("no") end

local has_ffi, ffi = pcall(require, "ffi")
if not has_ffi then ffi = nil else _G.ffi = ffi end
local ffi_gc = ffi and ffi.gc
-- a Lua 5.2+ runtime (no LuaJIT in this lupa): the 5.1 names scripts use
unpack = unpack or table.unpack
loadstring = loadstring or load
local unpack = unpack

-- the sysbench release copied: 1.1.0's Lua API where it differs (H.sysbench_version)
local V11 = H.sysbench_version == "1.1.0"

sysbench = {
   tid = H.tid,
   version = H.sysbench_version,
   version_string = "sysbench " .. H.sysbench_version,
   hooks = {},
   error = {NONE = 0, RESTART_EVENT = 1},
}

-----------------------------------------------------------------------------
-- log: through the host (verbosity and "(last message repeated N times)")
-----------------------------------------------------------------------------
local host_log = H.log
local function alert(msg) host_log(1, msg) end
local function fatal(msg) host_log(0, msg) end

-----------------------------------------------------------------------------
-- FFI: sysbench's C names (spec section 5), declared before the script runs
-----------------------------------------------------------------------------
if ffi then
   ffi.cdef[[
typedef enum {
  SB_CNT_OTHER, SB_CNT_READ, SB_CNT_WRITE, SB_CNT_TRX, SB_CNT_ERROR,
  SB_CNT_RECONNECT, SB_CNT_MAX
} sb_counter_type;
typedef enum { DB_ERROR_NONE, DB_ERROR_IGNORABLE, DB_ERROR_FATAL } sql_error_t;
typedef enum {
  SQL_TYPE_NONE, SQL_TYPE_TINYINT, SQL_TYPE_SMALLINT, SQL_TYPE_INT, SQL_TYPE_BIGINT,
  SQL_TYPE_FLOAT, SQL_TYPE_DOUBLE, SQL_TYPE_TIME, SQL_TYPE_DATE, SQL_TYPE_DATETIME,
  SQL_TYPE_TIMESTAMP, SQL_TYPE_CHAR, SQL_TYPE_VARCHAR
} sql_bind_type_t;
typedef enum {
  SB_ARG_TYPE_NULL, SB_ARG_TYPE_BOOL, SB_ARG_TYPE_INT, SB_ARG_TYPE_SIZE, SB_ARG_TYPE_DOUBLE,
  SB_ARG_TYPE_STRING, SB_ARG_TYPE_LIST, SB_ARG_TYPE_FILE, SB_ARG_TYPE_MAX
} sb_arg_type_t;
typedef bool sb_opt_validate_t(const char *, const char *);
typedef struct {
  const char *name; const char *desc; const char *value; sb_arg_type_t type;
  sb_opt_validate_t *validate;
} sb_arg_t;
typedef struct { uint32_t len; const char *ptr; } sql_value;
typedef struct { void *ptr; sql_value *values; } sql_row;
typedef struct sql_driver sql_driver;
typedef struct sql_connection sql_connection;
typedef struct sql_statement sql_statement;
typedef struct sql_result sql_result;
typedef struct sql_bind sql_bind;
typedef struct histogram sb_histogram_t;
void sb_counter_inc(int, sb_counter_type);
uint64_t sb_counter_val(int, sb_counter_type);
bool sb_more_events(int);
void sb_event_start(int);
void sb_event_stop(int);
uint64_t sb_rand_uniform_uint64(void);
uint32_t sb_rand_default(uint32_t, uint32_t);
uint32_t sb_rand_uniform(uint32_t, uint32_t);
uint32_t sb_rand_gaussian(uint32_t, uint32_t);
uint32_t sb_rand_pareto(uint32_t, uint32_t);
uint32_t sb_rand_unique(void);
void sb_rand_str(const char *, char *);
double sb_rand_uniform_double(void);
]]
   if V11 then   -- 1.1.0 declares zipfian and varstr; special is gone
      ffi.cdef[[
uint32_t sb_rand_zipfian(uint32_t, uint32_t);
uint32_t sb_rand_varstr(char *, uint32_t, uint32_t);
]]
   else
      ffi.cdef[[
uint32_t sb_rand_special(uint32_t, uint32_t);
]]
   end
end

-----------------------------------------------------------------------------
-- sysbench.rand: xoroshiro128+ per state, sysbench's formulas (spec 3, sysbench.md 4)
-----------------------------------------------------------------------------
local rnd_u64, rnd_double, rnd_string, rnd_fill, rng_s, c_special
-- Stmt:execute's statement handed to the C event loop without a yield (lua/bridge.c's
-- pysysbench_exec*, where the host has the extension), and a runner's event end
local c_exec1, c_exec2, c_exec4, c_done, on_stack
if ffi then
   rng_s = ffi.new("uint64_t[2]")
   local two32 = ffi.cast("uint64_t", 4294967296)   -- (no ULL literal: this file also parses as Lua 5.x)
   rng_s[0] = ffi.cast("uint64_t", H.seed[1]) * two32 + H.seed[2]
   rng_s[1] = ffi.cast("uint64_t", H.seed[3]) * two32 + H.seed[4]
   -- the C twin (lua/bridge.c) where the host has the extension: the same numbers, no garbage
   local C = H.native_path and select(2, pcall(function()
      ffi.cdef[[
uint64_t pysysbench_rand_u64(uint64_t *s);
double pysysbench_rand_double(uint64_t *s);
void pysysbench_rand_string(uint64_t *s, const char *fmt, size_t n, char *out);
double pysysbench_rand_special(uint64_t *s, double a, double b, double iter, double pct, double res);
int pysysbench_exec1(int id, int sig, double n1, const char *s1, double l1);
int pysysbench_exec2(int id, int sig, double n1, const char *s1, double l1, double n2, const char *s2, double l2);
int pysysbench_exec4(int id, int sig, double n1, const char *s1, double l1, double n2, const char *s2, double l2,
                     double n3, const char *s3, double l3, double n4, const char *s4, double l4);
int pysysbench_event_done(int stop);
extern int pysysbench_stacked[1];
]]
      return ffi.load(H.native_path)
   end))
   if type(C) == "userdata" then
      c_exec1, c_exec2, c_exec4 = C.pysysbench_exec1, C.pysysbench_exec2, C.pysysbench_exec4
      c_done, on_stack = C.pysysbench_event_done, C.pysysbench_stacked
      local c_u64, c_double, c_string = C.pysysbench_rand_u64, C.pysysbench_rand_double, C.pysysbench_rand_string
      c_special = C.pysysbench_rand_special
      rnd_u64 = function() return c_u64(rng_s) end
      rnd_double = function() return c_double(rng_s) end
      local buf, size = nil, 0
      rnd_string = function(fmt)
         local n = #fmt
         if n == 0 then return "" end
         if n > size then size = n; buf = ffi.new("char[?]", n) end
         c_string(rng_s, fmt, n, buf)
         return ffi.string(buf, n)
      end
      rnd_fill = function(fmt, n, out) c_string(rng_s, fmt, n, out) end
   end
end
if ffi and not rnd_u64 then
   local bit = require("bit")
   local bxor, rol, lshift, rshift = bit.bxor, bit.rol, bit.lshift, bit.rshift
   rnd_u64 = function()
      local s0, s1 = rng_s[0], rng_s[1]
      local r = s0 + s1
      s1 = bxor(s1, s0)
      rng_s[0] = bxor(rol(s0, 55), s1, lshift(s1, 14))
      rng_s[1] = rol(s1, 36)
      return r
   end
   rnd_double = function()
      return tonumber(rshift(rnd_u64(), 12)) * 2.220446049250313e-16
   end
elseif not ffi then
   rnd_u64, rnd_double = H.rng_u64, H.rng_double
end

-- FFI's uint32_t conversion: truncate toward zero, reduce modulo 2^32
local function u32(x, argn, fname)
   local t = type(x)
   if t == "boolean" then return x and 1 or 0 end
   if t ~= "number" then
      error(sformat("bad argument #%d to '%s' (cannot convert '%s' to 'unsigned int')",
                    argn, fname, t), 3)
   end
   if x >= 0 then x = floor(x) else x = -floor(-x) end
   return x % 4294967296
end

local function to_u32(v)
   v = floor(v)
   return v % 4294967296
end

local spec_iter, spec_pct, spec_res, pareto_h = H.rand_spec_iter, H.rand_spec_pct,
   H.rand_spec_res, H.rand_pareto_h
local pareto_power = log(pareto_h) / log(1.0 - pareto_h)

local function r_uniform(a, b)
   return to_u32(a + rnd_double() * ((b - a + 1) % 4294967296))
end
local function r_gaussian(a, b)
   local t = (b - a + 1) % 4294967296
   local sum = 0.0
   for i = 1, spec_iter do sum = sum + rnd_double() * t end
   return to_u32(a + floor(sum / spec_iter))
end
local function r_special(a, b)
   local t = (b - a) % 4294967296
   local R = t * 100.0 / (100.0 - spec_res)
   local u = rnd_double()
   if u * R < t then
      local sum = 0.0
      for i = 1, spec_iter do sum = sum + rnd_double() end
      return to_u32(a + sum * t / spec_iter)
   end
   local d = t * spec_pct / 100.0
   return to_u32(a + floor(u * (d + 1) + t / 2.0 - t * spec_pct / 200.0))
end
if c_special then     -- the same in C (lua/bridge.c): no branch left in the caller's trace
   r_special = function(a, b) return c_special(rng_s, a, b, spec_iter, spec_pct, spec_res) end
end
local function r_pareto(a, b)
   return to_u32(a + floor(((b - a + 1) % 4294967296) * rnd_double() ^ pareto_power))
end
-- zipfian: not a sysbench 1.0.20 distribution (no sysbench.rand.zipfian), only what
-- --rand-type=zipfian makes sysbench.rand.default draw, as for the native workloads
-- (pysysbench/core/rand.py Rand.zipfian: the same sampler, operation for operation; log1p and
-- expm1 by the classic identities, Lua having neither)
local abs = math.abs
local z_1me, z_neg = 1.0 - H.rand_zipfian_exp, -H.rand_zipfian_exp
local function z_log1p_over_x(x)
   if abs(x) > 1e-8 then
      local u = 1.0 + x
      if u == 1.0 then return 1.0 end
      return log(u) / (u - 1.0)
   end
   return 1.0 - x * (0.5 - x * (0.33333333333333333 - 0.25 * x))
end
local function z_expm1_over_x(x)
   if abs(x) > 1e-8 then
      local u = exp(x)
      if u == 1.0 then return 1.0 end
      if u - 1.0 == -1.0 then return -1.0 / x end
      return (u - 1.0) / log(u)
   end
   return 1.0 + x * 0.5 * (1.0 + x * 0.33333333333333333 * (1.0 + 0.25 * x))
end
-- with the FFI, the C library's own log1p and expm1 (sysbench's and Python's math.log1p):
-- the same bits as the 1.1.0 binary, where the identities above can differ in the last one
local c_log1p, c_expm1
if ffi then
   pcall(function()
      ffi.cdef[[
double pysysbench_log1p(double) __asm__("log1p");
double pysysbench_expm1(double) __asm__("expm1");
]]
      c_log1p, c_expm1 = ffi.C.pysysbench_log1p, ffi.C.pysysbench_expm1
   end)
end
if c_expm1 then
   z_log1p_over_x = function(x)
      if abs(x) > 1e-8 then return c_log1p(x) / x end
      return 1.0 - x * (0.5 - x * (0.33333333333333333 - 0.25 * x))
   end
   z_expm1_over_x = function(x)
      if abs(x) > 1e-8 then return c_expm1(x) / x end
      return 1.0 + x * 0.5 * (1.0 + x * 0.33333333333333333 * (1.0 + 0.25 * x))
   end
end
local function z_hint(x) local lx = log(x); return z_expm1_over_x(z_1me * lx) * lx end
local function z_h(x) return exp(z_neg * log(x)) end
local function z_hinv(x)
   local t = x * z_1me
   if t < -1.0 then t = -1.0 end
   return exp(z_log1p_over_x(t) * x)
end
local z_s = 2.0 - z_hinv(z_hint(2.5) - z_h(2.0))
local z_x1 = z_hint(1.5) - 1.0
local function r_zipfian(a, b)
   local n = (b - a + 1) % 4294967296
   local h_n = z_hint(n + 0.5)
   local span = z_x1 - h_n
   while true do
      local v = h_n + rnd_double() * span
      local x = z_hinv(v)
      local k = floor(x + 0.5)
      if k < 1 then k = 1 elseif k > n then k = n end
      if k - x <= z_s or v >= z_hint(k + 0.5) - z_h(k) then
         return to_u32(a + k - 1)
      end
   end
end
if V11 then
   -- 1.1.0 dropped --rand-spec-iter, and its gaussian still sums that many draws (none: it
   -- reads 0) and divides by it: every number is the lower bound, no draw taken
   r_gaussian = function(a, b) return a end
   r_special = nil
end
local dists = {uniform = r_uniform, gaussian = r_gaussian, special = r_special, pareto = r_pareto,
               zipfian = r_zipfian}
-- the run's --rand-type (cli/compat.py validate checks it before any state exists)
local r_default = dists[H.rand_type] or error("Invalid random numbers distribution: " .. tostring(H.rand_type) .. ".")

local function r_string(fmt)
   local n = #fmt
   local out = {}
   for i = 1, n do
      local c = sbyte(fmt, i)
      if c == 35 then        -- '#'
         out[i] = schar(r_uniform(48, 57))
      elseif c == 64 then    -- '@'
         out[i] = schar(r_uniform(97, 122))
      elseif c == 0 then
         for j = i, n do out[j] = "\0" end
         break
      else
         out[i] = schar(c)
      end
   end
   return concat(out)
end
if rnd_string then r_string = rnd_string end

local host_unique = H.unique
local function wrap2(f, name)
   return function(a, b) return f(u32(a, 1, name), u32(b, 2, name)) end
end
sysbench.rand = {
   uniform = wrap2(r_uniform, "uniform"),
   gaussian = wrap2(r_gaussian, "gaussian"),
   special = wrap2(r_special, "special"),
   pareto = wrap2(r_pareto, "pareto"),
   default = wrap2(r_default, "default"),
   unique = function() return host_unique() end,
   uniform_uint64 = rnd_u64,
   uniform_double = rnd_double,
   string = function(fmt) return r_string(fmt) end,
}
-- 1.1.0's varstring: 1.1.0's own checks and messages, then uniform(min, max) characters
-- between '0' and 'z' (min above max: from 1)
local function r_varstr(min_len, max_len)   -- sb_rand_varstr: no checks of its own
   local lo, hi = u32(min_len, 2, "sb_rand_varstr"), u32(max_len, 3, "sb_rand_varstr")
   if hi == 0 then return "" end
   if lo > hi then lo = 1 end
   local out = {}
   for i = 1, r_uniform(lo, hi) do out[i] = schar(r_uniform(48, 122)) end
   return concat(out)
end
local function r_varstring(min_len, max_len)
   local ok, bad = pcall(function() return min_len <= max_len end)
   if not ok then error('[string "sysbench.rand.lua"]:74: ' .. bad:gsub("^.-:%d+: ", ""), 0) end
   if not bad then error('[string "sysbench.rand.lua"]:74: assertion failed!', 0) end
   ok, bad = pcall(function() return max_len > 0 end)
   if not ok then error('[string "sysbench.rand.lua"]:75: ' .. bad:gsub("^.-:%d+: ", ""), 0) end
   if not bad then error('[string "sysbench.rand.lua"]:75: assertion failed!', 0) end
   return r_varstr(min_len, max_len)
end
if V11 then
   sysbench.rand.special = nil
   sysbench.rand.zipfian = wrap2(r_zipfian, "?")   -- as the FFI names it there
   sysbench.rand.varstring = r_varstring
end
-- hot path: the OLTP scripts call these with valid integer bounds
if ffi then
   sysbench.rand.uniform = function(a, b)
      if type(a) == "number" and type(b) == "number" and a >= 0 and b >= a and a % 1 == 0 and b % 1 == 0
         and b < 4294967296 then
         return floor(a + rnd_double() * (b - a + 1))
      end
      return r_uniform(u32(a, 1, "uniform"), u32(b, 2, "uniform"))
   end
end

-----------------------------------------------------------------------------
-- counters and the event loop (what ffi.C.sb_* reach)
-----------------------------------------------------------------------------
local host_counter_inc, host_more, host_start, host_stop = H.counter_inc, H.more_events,
   H.event_start, H.event_stop

-- ffi.C proxy: sysbench's own symbols come from the host, the rest from libc
if ffi then
   local realC = ffi.C
   -- a C function's number argument as the FFI converts it, or the FFI's error at the
   -- caller's line (level 3: the caller of the function that called this)
   local function c_num(x, n, fname, ctype)
      local t = type(x)
      if t == "number" then return x end
      if t == "boolean" then return x and 1 or 0 end
      if t == "cdata" then
         local ok, v = pcall(tonumber, x)
         if ok and v then return v end
      elseif t == "string" and ctype == "sb_counter_type" then   -- an enum takes its constants' names
         local ok, v = pcall(ffi.cast, "sb_counter_type", x)
         if ok then return tonumber(v) end
      end
      error(sformat("bad argument #%d to '%s' (cannot convert '%s' to '%s')", n, fname,
                    t == "cdata" and tostring(ffi.typeof(x)):match("^ctype<(.*)>$") or t, ctype), 3)
   end
   local function usleep(us)
      us = c_num(us, 1, "usleep", "unsigned int")
      if coroutine.isyieldable() then yield(OP_SLEEP, us / 1e6) end   -- LuaJIT 2.1 has it
      return 0
   end
   local function wrap0(f) return function() return f() end end
   local own = {
      sb_counter_inc = function(tid, t)
         host_counter_inc(c_num(tid, 1, "sb_counter_inc", "int"), c_num(t, 2, "sb_counter_inc", "sb_counter_type"))
      end,
      sb_counter_val = function(tid, t)
         local v = H.counter_val(c_num(tid, 1, "sb_counter_val", "int"), c_num(t, 2, "sb_counter_val", "sb_counter_type"))
         return ffi.cast("uint64_t", v)
      end,
      sb_more_events = function(tid) return host_more(c_num(tid, 1, "sb_more_events", "int")) end,
      sb_event_start = function(tid) host_start(c_num(tid, 1, "sb_event_start", "int")) end,
      sb_event_stop = function(tid) host_stop(c_num(tid, 1, "sb_event_stop", "int")) end,
      sb_rand_uniform_uint64 = rnd_u64,
      sb_rand_uniform_double = rnd_double,
      sb_rand_default = wrap2(r_default, "sb_rand_default"),
      sb_rand_uniform = wrap2(r_uniform, "sb_rand_uniform"),
      sb_rand_gaussian = wrap2(r_gaussian, "sb_rand_gaussian"),
      sb_rand_special = r_special and wrap2(r_special, "sb_rand_special"),
      sb_rand_zipfian = V11 and wrap2(r_zipfian, "sb_rand_zipfian") or nil,
      sb_rand_varstr = V11 and function(buf, min_len, max_len)
         local s = r_varstr(min_len, max_len)
         ffi.copy(buf, s, #s)
         return #s
      end or nil,
      sb_rand_pareto = wrap2(r_pareto, "sb_rand_pareto"),
      sb_rand_unique = wrap0(host_unique),
      sb_rand_str = function(fmt, buf)
         if type(fmt) ~= "string" and type(fmt) ~= "cdata" then
            error(sformat("bad argument #1 to 'sb_rand_str' (cannot convert '%s' to 'const char *')", type(fmt)), 2)
         end
         local s = r_string(ffi.string(fmt))
         ffi.copy(buf, s, #s)
      end,
      usleep = usleep,
      sleep = function(s) usleep(c_num(s, 1, "sleep", "unsigned int") * 1e6); return 0 end,
      sb_print_test_options = function() H.print_test_options() end,
   }
   ffi.C = setmetatable(own, {__index = function(_, k) return realC[k] end})
end

-----------------------------------------------------------------------------
-- sysbench.cmdline
-----------------------------------------------------------------------------
sysbench.cmdline = {
   argv = H.argv,
   command = H.command,
   script_path = H.script_path,
   ARG_NULL = 0, ARG_BOOL = 1, ARG_INT = 2, ARG_SIZE = 3, ARG_DOUBLE = 4,
   ARG_STRING = 5, ARG_LIST = 6, ARG_FILE = 7, ARG_MAX = 8,
   PARALLEL_COMMAND = true,
}

function sysbench.cmdline.command_defined(name)
   local cmds = sysbench.cmdline.commands
   return type(cmds) == "table" and cmds[name] ~= nil and type(cmds[name]) == "table"
      and cmds[name][1] ~= nil
end

function sysbench.cmdline.command_parallel(name)
   return sysbench.cmdline.command_defined(name) and sysbench.cmdline.commands[name][2] == true
end

function sysbench.cmdline.call_command(name)
   if not sysbench.cmdline.command_defined(name) then return false end
   local rc = sysbench.cmdline.commands[name][1]()
   if rc == nil then return true end
   return rc and true or false
end

function sysbench.cmdline.print_test_options()
   H.print_test_options()
end

-- the declarations as plain rows for the host: {name, description, default string or nil,
-- type, has default, validator}; errors carry sysbench's internal line numbers
function sysbench.cmdline.read_cmdline_options()
   local opts = sysbench.cmdline.options
   if opts == nil then return nil end
   if type(opts) ~= "table" then
      error(sformat('[string "sysbench.cmdline.lua"]:120: wrong type for sysbench.cmdline.options: %s',
                    type(opts)), 0)
   end
   local names = {}
   for k, v in pairs(opts) do
      if type(k) ~= "string" or type(v) ~= "table" then
         error('[string "sysbench.cmdline.lua"]:131: wrong table structure in sysbench.cmdline.options', 0)
      end
      names[#names + 1] = k
   end
   table.sort(names)
   local rows = {}
   for i, name in ipairs(names) do
      local def = opts[name]
      if def[1] == nil then
         error('[string "sysbench.cmdline.lua"]:137: nil description for option ' .. name, 0)
      end
      local default, otype = def[2], def[3]
      if type(default) == "table" and otype ~= nil then
         error('[string "sysbench.cmdline.lua"]:141: wrong type for list option ' .. name, 0)
      end
      local str
      local dt = type(default)
      if dt == "table" then str = concat(default, ",")
      elseif dt == "boolean" then str = default and "on" or "off"
      elseif dt == "number" then str = tostring(default)
      elseif dt == "string" then str = default
      elseif dt == "nil" then str = nil
      else
         error(sformat("[string \"sysbench.cmdline.lua\"]:151: cannot convert '%s' to 'const char *'", dt), 0)
      end
      if otype == nil then
         if dt == "boolean" then otype = 1
         elseif dt == "number" then otype = 4
         elseif dt == "table" then otype = 6
         else otype = 5 end
      end
      rows[i] = {name, tostring(def[1]), str, otype, def[4]}
   end
   return rows
end

-----------------------------------------------------------------------------
-- sysbench.sql
-----------------------------------------------------------------------------
local sql = {
   type = {NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5, DOUBLE = 6,
           TIME = 7, DATE = 8, DATETIME = 9, TIMESTAMP = 10, CHAR = 11, VARCHAR = 12},
   error = {NONE = 0, IGNORABLE = 1, FATAL = 2},
}
sysbench.sql = sql
local T_BIGINT, T_DOUBLE, T_VARCHAR = 4, 6, 12
-- the face's release: 1.1.0 sends a FLOAT / DOUBLE parameter's value (1.0.20 sends 0), and the
-- lines of its sysbench.sql.lua that conversion errors name differ
local SB_11 = H.sysbench_version == "1.1.0"
local SQL_LUA_SET = SB_11 and '[string "sysbench.sql.lua"]:351: ' or '[string "sysbench.sql.lua"]:335: '
local SQL_LUA_NEW = SB_11 and '[string "sysbench.sql.lua"]:411: ' or '[string "sysbench.sql.lua"]:399: '

local Driver, Conn, Result, Stmt, Param = {}, {}, {}, {}, {}
Driver.__index, Conn.__index, Result.__index, Stmt.__index, Param.__index = Driver, Conn, Result, Stmt, Param
Driver.__tostring = function() return "<sql_driver>" end
Conn.__tostring = function() return "<sql_connection>" end
Result.__tostring = function() return "<sql_result>" end
Stmt.__tostring = function() return "<sql_statement>" end
Param.__tostring = function() return "<sql_param>" end

-- what a statement without a result set returns: a NULL sql_result* (== nil, yet truthy)
local NULL_RESULT
if ffi then
   ffi.cdef("struct sb_null_result;")
   ffi.metatype("struct sb_null_result", {
      __tostring = function() return "<sql_result>" end,
      __index = function(_, k)
         local m = Result[k]
         if type(m) == "function" then return m end
         error("attempt to use the result of a statement that returned no result set (field '" ..
               tostring(k) .. "')", 2)
      end,
   })
   NULL_RESULT = ffi.cast("struct sb_null_result *", nil)
else
   NULL_RESULT = setmetatable({}, {__tostring = function() return "<sql_result>" end})
end
sysbench.sql.NULL_RESULT = NULL_RESULT

-- drivers and connections are cdata handles (type() "cdata", tostring <sql_driver> /
-- <sql_connection>, as in sysbench); their Lua-side fields live in HANDLE[id]
local HANDLE = {}
local new_handle, fields_of
if ffi then
   ffi.cdef("struct sb_lua_handle { int id; }; struct sb_lua_dhandle { int id; };")
   local function meta(methods)
      return {
         __index = function(h, k)
            local m = methods[k]
            if m ~= nil then return m end
            return HANDLE[h.id][k]
         end,
         __newindex = function(h, k, v) HANDLE[h.id][k] = v end,
         __tostring = methods.__tostring,
      }
   end
   local conn_ct = ffi.metatype("struct sb_lua_handle", meta(Conn))
   local drv_ct = ffi.metatype("struct sb_lua_dhandle", meta(Driver))
   local next_handle = 0
   local gc_conn = H.gc_conn
   -- an unreferenced connection is closed when collected (sysbench's ffi.gc); the fields
   -- never point back at the handle, so the handle can become garbage
   local function collect(h)
      local f = HANDLE[h.id]
      HANDLE[h.id] = nil
      -- pcall: at the state's very end the host may already be gone
      if f and f.cid and not f.closed then pcall(gc_conn, f.cid) end
   end
   fields_of = function(h) return HANDLE[h.id] end
   new_handle = function(kind, fields)
      next_handle = next_handle + 1
      HANDLE[next_handle] = fields
      if kind == "conn" then return ffi_gc(conn_ct(next_handle), collect) end
      return drv_ct(next_handle)
   end
else
   new_handle = function(kind, fields)
      return setmetatable(fields, kind == "conn" and Conn or Driver)
   end
   fields_of = function(t) return t end
end

local drivers = {}
function sql.driver(name)
   name = name or H.db_driver
   local d = drivers[name]
   if d then return d end
   local ok, lname = yield(OP_DRIVER, name)
   if not ok then error("failed to initialize the DB driver", 2) end
   d = new_handle("driver", {sname = name, lname = lname})
   drivers[name] = d
   return d
end

function Driver:name() return self.sname end

local function new_result()
   return setmetatable({nrows = 0, nfields = 0, valid = false, pos = 0, data = nil}, Result)
end

function Driver:connect()
   local id = yield(OP_CONNECT, self.sname)
   if not id then error("connection creation failed", 2) end
   local con = new_handle("conn", {cid = id, driver = self, error = 0, sql_errno = 0, sql_state = nil,
                                   sql_errmsg = nil, closed = false})
   con.rs = new_result()
   return con
end

local function free_slot(rs)
   -- without a branch: a trace through here would leave (an exit) whenever the previous
   -- statement's result differed in kind from the one it was recorded with
   rs.valid, rs.nrows, rs.nfields, rs.data, rs.pos = false, 0, 0, nil, 0
end
local function free_rs(con) free_slot(con.rs) end

-- the restart descriptor or fatal message of a failed statement (spec 2.7)
local function sql_failure(con, query, errno, state, msg, ignorable)
   con.error = ignorable and 1 or 2
   con.sql_errno, con.sql_state, con.sql_errmsg = errno, state, msg
   local e = {connection = con, query = query, sql_errno = errno, sql_state = state, sql_errmsg = msg}
   if not ignorable then
      local hook = sysbench.hooks.sql_error_ignorable
      if type(hook) == "function" and hook(e) then ignorable = true end
   end
   if ignorable then
      e.errcode = sysbench.error.RESTART_EVENT
      return e
   end
   return sformat("SQL error, errno = %d, state = '%s': %s", errno, state, msg)
end

local function ok_state(con)
   if con.error ~= 0 then   -- (each field write of a cdata handle is a metamethod call)
      con.error, con.sql_errno, con.sql_state, con.sql_errmsg = 0, 0, nil, nil
   end
end

-- the query's answer for Conn:query / query_row (levels: 2 = the method, 3 = the script line
-- calling it; "SQL API error" names the caller of that line, as sysbench does)
local function send_query(con, query)
   local n = #query
   if con.closed then
      alert("attempt to use an already closed connection")
      error("SQL API error", 4)
   end
   free_rs(con)
   local r, a, b, c, d = yield(OP_QUERY, con.cid, query)
   if r == 0 or r == 1 then
      ok_state(con)
      return r, a, b, c
   end
   error(sql_failure(con, query, a, b, c, d), 3)
end

function Conn:query(query)
   local r, nfields, nrows, data = send_query(self, query)
   if r == 0 then return NULL_RESULT end
   local rs = self.rs
   rs.valid, rs.nfields, rs.nrows, rs.data, rs.pos = true, nfields, nrows, data, 0
   return rs
end

function Conn:query_row(query)
   local r, nfields, nrows, data = send_query(self, query)
   if r == 0 or nrows == 0 then return nil end
   return unpack(data, 1, nfields)
end

function Conn:check_error(rs, query)
   if rs ~= nil or self.error == 0 then return rs end
   if self.sql_state == nil or self.sql_errmsg == nil then error("SQL API error", 2) end
   local e = sql_failure(self, query, self.sql_errno, self.sql_state, self.sql_errmsg, self.error == 1)
   error(e, 2)
end

function Conn:disconnect()
   if self.closed then
      alert("attempt to close an already closed connection")
      return true
   end
   free_rs(self)
   self.closed = true
   yield(OP_DISCONNECT, self.cid)
   return true
end

function Conn:reconnect()
   free_rs(self)
   local ok = yield(OP_RECONNECT, self.cid)
   assert(ok)
   return true
end

local BULK_MAX = 524288
function Conn:bulk_insert_init(prefix)
   if #prefix + 1 > BULK_MAX then
      fatal("Query length exceeds the maximum value (524288), aborting")
      error("db_bulk_insert_init() failed", 2)
   end
   self.bulk = {prefix = prefix, parts = {prefix}, n = 0, len = #prefix}
   return true, "db_bulk_insert_init() failed"
end

local function bulk_flush(con, b)
   if b.n == 0 then return true end
   local q = concat(b.parts)
   b.parts, b.n, b.len = {b.prefix}, 0, #b.prefix
   free_rs(con)
   local r, a, _, c = yield(OP_QUERY, con.cid, q)
   return r == 0 or r == 1
end

function Conn:bulk_insert_next(row)
   local b = self.bulk
   if b == nil then
      alert("attempt to call bulk_insert_next() before bulk_insert_init()")
      error("db_bulk_insert_next() failed", 2)
   end
   local need = #row + (b.n > 0 and 1 or 0)
   if b.len + need + 1 > BULK_MAX then
      if #b.prefix + #row + 1 > BULK_MAX then
         fatal("Query length exceeds the maximum value (524288), aborting")
         error("db_bulk_insert_next() failed", 2)
      end
      if not bulk_flush(self, b) then error("db_bulk_insert_next() failed", 2) end
      need = #row
   end
   local parts = b.parts
   if b.n > 0 then parts[#parts + 1] = "," end
   parts[#parts + 1] = row
   b.n, b.len = b.n + 1, b.len + need
   return true, "db_bulk_insert_next() failed"
end

function Conn:bulk_insert_done()
   local b = self.bulk
   if b ~= nil then
      self.bulk = nil
      if not bulk_flush(self, b) then error("db_bulk_insert_done() failed", 2) end
   end
   return true, "db_bulk_insert_done() failed"
end

function Conn:prepare(query)
   if self.closed then
      alert("attempt to use an already closed connection")
      error("SQL API error", 2)
   end
   free_rs(self)
   local id = yield(OP_PREPARE, self.cid, query)
   if not id then error("SQL API error", 2) end
   -- cf: the connection's field table, read directly on the hot path (each field of a
   -- cdata handle is a metamethod call)
   return setmetatable({id = id, connection = self, cf = fields_of(self), query = query, params = nil,
                        nparams = 0}, Stmt)
end

function Stmt:bind_create(btype, max_len)
   local t
   if btype == 1 or btype == 2 or btype == 3 or btype == 4 then
      t = T_BIGINT; max_len = 8
   elseif btype == 5 or btype == 6 then
      t = T_DOUBLE; max_len = 8
   elseif btype == 11 or btype == 12 then
      t = T_VARCHAR
      if type(max_len) ~= "number" then
         error(SQL_LUA_NEW .. "bad argument #2 to 'new' (cannot convert '" ..
               type(max_len) .. "' to 'int')", 0)
      end
   else
      error("Unsupported argument type: " .. btype, 2)
   end
   return setmetatable({type = t, max_len = max_len, v = nil, is_null = 0}, Param)
end

function Stmt:bind_param(...)
   local n = select("#", ...)
   if n == 0 then return nil end
   self.params = {...}
   self.nparams = n
   return 0
end

function Param:set(value)
   local t = self.type
   if value == nil then self.v = nil; return end
   if t == T_BIGINT then
      local vt = type(value)
      if vt == "number" then
         if value % 1 ~= 0 then
            if value >= 0 then value = floor(value) else value = -floor(-value) end
         end
      elseif vt == "boolean" then value = value and 1 or 0
      else
         error(SQL_LUA_SET .. "cannot convert '" .. vt .. "' to 'int64_t'", 2)
      end
      self.v = value
   elseif t == T_VARCHAR then
      if #value > self.max_len then value = ssub(value, 1, self.max_len) end
      self.v = value
   elseif t == T_DOUBLE then
      if not SB_11 then
         self.v = 0.0  -- sysbench 1.0.20 writes doubles past the buffer: 0 is sent
         return
      end
      local vt = type(value)
      if vt == "boolean" then value = value and 1 or 0
      elseif vt ~= "number" then
         error(SQL_LUA_SET .. "cannot convert '" .. vt .. "' to 'double'", 2)
      end
      self.v = value
   else
      error("Unsupported argument type: " .. tostring(t), 2)
   end
end

function Param:set_rand_str(fmt)
   if self.type ~= T_VARCHAR then error("Unsupported argument type: " .. tostring(self.type), 2) end
   if rnd_fill ~= nil and type(fmt) == "string" then
      -- drawn into the parameter's own buffer, as sysbench draws into its bind buffer: no
      -- string per call (oltp_read_write's update and insert: three a event, 0.4 KB of garbage
      -- that grew each state's heap to twice its live size between collections).  v is then
      -- that cdata; param_value turns it into a string where a yield needs one
      -- (buf, bufsize, blen: fields of the parameters that draw, not of every parameter)
      local n, buf = #fmt, self.buf
      if buf == nil or n > self.bufsize then
         buf = ffi.new("char[?]", n > 0 and n or 1)
         self.buf, self.bufsize = buf, n
      end
      rnd_fill(fmt, n, buf)
      self.blen = n > self.max_len and self.max_len or n
      self.v = buf
      return
   end
   local s = r_string(fmt)
   if #s > self.max_len then s = ssub(s, 1, self.max_len) end
   self.v = s
end

-- a parameter's value as Lua has it (set_rand_str's buffer as a string)
local function param_value(p)
   local v = p.v
   if type(v) == "cdata" then return ffi.string(v, p.blen) end
   return v
end

-- a parameter as pysysbench_exec* take it: its ARG_* code (-1: not one they take), number,
-- string (or set_rand_str's buffer) and length
local function exec_arg(p)
   local v = p.v
   local tv = type(v)
   if tv == "number" then return 1, v, nil, 0 end
   if tv == "string" then return 2, 0, v, #v end
   if tv == "cdata" then return 2, 0, v, p.blen end
   if tv == "boolean" then return 3, v and 1 or 0, nil, 0 end
   if v == nil then return 0, 0, nil, 0 end
   return -1, 0, nil, 0
end

function Stmt:execute()
   local con, cf = self.connection, self.cf
   if cf.closed then
      alert("attempt to use an already closed connection")
      error("SQL API error", 3)
   end
   free_slot(cf.rs)
   local p, n = self.params, self.nparams
   local r, a, b, c, d
   if c_exec1 ~= nil and on_stack[0] ~= 0 and n <= 4 then
      -- on the state's own C stack the statement goes to the loop in this call (-2: not
      -- there, -1: it failed or the thread stops: the yield below, which the host answers)
      local id = self.id
      if n == 1 then
         local c1, n1, s1, l1 = exec_arg(p[1])
         if c1 >= 0 then r = c_exec1(id, 1 + 8 * c1, n1, s1, l1) end
      elseif n == 2 then
         local c1, n1, s1, l1 = exec_arg(p[1])
         local c2, n2, s2, l2 = exec_arg(p[2])
         if c1 >= 0 and c2 >= 0 then r = c_exec2(id, 2 + 8 * c1 + 32 * c2, n1, s1, l1, n2, s2, l2) end
      elseif n == 0 then
         r = c_exec1(id, 0, 0, nil, 0)
      else
         local c1, n1, s1, l1 = exec_arg(p[1])
         local c2, n2, s2, l2 = exec_arg(p[2])
         local c3, n3, s3, l3 = exec_arg(p[3])
         local c4, n4, s4, l4 = 0, 0, nil, 0
         if n == 4 then c4, n4, s4, l4 = exec_arg(p[4]) end
         if c1 >= 0 and c2 >= 0 and c3 >= 0 and c4 >= 0 then
            r = c_exec4(id, n + 8 * c1 + 32 * c2 + 128 * c3 + 512 * c4, n1, s1, l1, n2, s2, l2, n3, s3, l3,
                        n4, s4, l4)
         end
      end
   end
   if r == 0 or r == 1 then  -- answered on the stack: nothing to yield
   elseif n == 0 then r, a, b, c, d = yield(OP_EXEC, self.id)
   elseif n == 1 then r, a, b, c, d = yield(OP_EXEC, self.id, param_value(p[1]))
   elseif n == 2 then r, a, b, c, d = yield(OP_EXEC, self.id, param_value(p[1]), param_value(p[2]))
   elseif n == 3 then
      r, a, b, c, d = yield(OP_EXEC, self.id, param_value(p[1]), param_value(p[2]), param_value(p[3]))
   elseif n == 4 then        -- oltp_common's INSERT: no table of arguments an event
      r, a, b, c, d = yield(OP_EXEC, self.id, param_value(p[1]), param_value(p[2]), param_value(p[3]),
                            param_value(p[4]))
   else
      local args = {}
      for i = 1, n do args[i] = param_value(p[i]) end
      r, a, b, c, d = yield(OP_EXEC, self.id, unpack(args, 1, n))
   end
   if r == 0 then ok_state(cf); return NULL_RESULT end
   if r == 1 then
      ok_state(cf)
      local rs = cf.rs
      rs.valid, rs.nfields, rs.nrows, rs.data, rs.pos = true, 0, a or 0, nil, 0
      return rs
   end
   local e = sql_failure(con, "<prepared statement>", a, b, c, d)
   error(e, 2)
end

function Stmt:close()
   yield(OP_CLOSE_STMT, self.id)
   return 0
end

-- sysbench 1.1's multiple result sets (a CALL's): the driver read the whole response, the
-- results after the first wait on the Python side; a result without rows (the CALL's own
-- status at the end) and the end itself are both a NULL result, as in 1.1
if SB_11 then
   local NO_RESULT = ffi and NULL_RESULT or nil   -- (without ffi a loop `while rs ~= nil` must end)
   local function next_result(con, rows)
      if con.closed then
         alert("attempt to use an already closed connection")
         error("SQL API error", 3)
      end
      free_rs(con)
      local r, nfields, nrows, data = yield(OP_NEXT_RESULT, con.cid)
      ok_state(con)
      if r == 0 then return NO_RESULT end
      local rs = con.rs
      if rows then
         rs.valid, rs.nfields, rs.nrows, rs.data, rs.pos = true, nfields, nrows, data, 0
      else   -- a prepared statement's result set, as Stmt:execute returns one
         rs.valid, rs.nfields, rs.nrows, rs.data, rs.pos = true, 0, 0, nil, 0
      end
      return rs
   end

   function Conn:next_result() return next_result(self, true) end
   function Stmt:next_result() return next_result(self.cf, false) end

   function Conn:more_results()
      if self.closed then
         alert("attempt to use an already closed connection")
         return false
      end
      -- 1.1 answers true only while a result set is the connection's current result
      if not self.rs.valid then return false end
      return yield(OP_MORE_RESULTS, self.cid) == true
   end
end

function Result:fetch_row()
   if not self.valid then
      alert("attempt to fetch row from an invalid result set")
      return nil
   end
   local nf = self.nfields
   if self.nrows == 0 or nf == 0 then
      alert("attempt to fetch row from an empty result set")
      return nil
   end
   local pos = self.pos
   if pos >= self.nrows then return nil end
   self.pos = pos + 1
   local data, base, row = self.data, pos * nf, {}
   for i = 1, nf do row[i] = data[base + i] end
   return row
end

function Result:free()
   if not self.valid then
      alert("attempt to free an invalid result set")
      error("db_free_results() failed", 2)
   end
   free_slot(self)
   return true, "db_free_results() failed"
end

-----------------------------------------------------------------------------
-- sysbench.histogram (spec 4.4)
-----------------------------------------------------------------------------
local Hist = {}
Hist.__index = Hist
Hist.__tostring = "<sb_histogram>"   -- a string, as in 1.0.20: tostring(h) raises
sysbench.histogram = {}
function sysbench.histogram.new(size, range_min, range_max)
   local h = setmetatable({size = size, min = range_min, max = range_max, counts = {}}, Hist)
   h.lmin = log(range_min)
   h.mult = (size - 1) / (log(range_max) - h.lmin)
   for i = 0, size - 1 do h.counts[i] = 0 end
   return h
end
function Hist:update(value)
   local i
   if value <= 0 or value < self.min then i = 0
   else i = floor((log(value) - self.lmin) * self.mult + 0.5) end
   if i < 0 then i = 0 elseif i > self.size - 1 then i = self.size - 1 end
   self.counts[i] = self.counts[i] + 1
   rnd_u64()
end
function Hist:print()
   local maxc = 0
   for i = 0, self.size - 1 do if self.counts[i] > maxc then maxc = self.counts[i] end end
   if maxc == 0 then return end
   local out = {"       value  ------------- distribution ------------- count"}
   for i = 0, self.size - 1 do
      local c = self.counts[i]
      if c > 0 then
         local w = floor(c * 40 / maxc + 0.5)
         out[#out + 1] = sformat("%12.3f |%-40s %d", exp(i / self.mult + self.lmin), string.rep("*", w), c)
      end
   end
   io.write(concat(out, "\n"), "\n")
end

-----------------------------------------------------------------------------
-- report functions (spec 4.3)
-----------------------------------------------------------------------------
function sysbench.report_default(stat)
   local ti = stat.time_interval
   print(sformat("[ %.0fs ] thds: %u tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) " ..
                 "lat (ms,%u%%): %4.2f err/s %4.2f reconn/s: %4.2f",
                 stat.time_total, stat.threads_running, stat.events / ti,
                 (stat.reads + stat.writes + stat.other) / ti, stat.reads / ti, stat.writes / ti,
                 stat.other / ti, sysbench.opt.percentile, stat.latency_pct * 1000,
                 stat.errors / ti, stat.reconnects / ti))
end

function sysbench.report_csv(stat)
   local ti = stat.time_interval
   print(sformat("%.0f,%u,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f",
                 stat.time_total, stat.threads_running, stat.events / ti,
                 (stat.reads + stat.writes + stat.other) / ti, stat.reads / ti, stat.writes / ti,
                 stat.other / ti, stat.latency_pct * 1000, stat.errors / ti, stat.reconnects / ti))
end

function sysbench.report_json(stat)
   if not gobj then
      io.write("[\n")
      if newproxy then
         gobj = newproxy(true)
         getmetatable(gobj).__gc = function() io.write("\n]\n") end
      else
         gobj = setmetatable({}, {__gc = function() io.write("\n]\n") end})
      end
   else
      io.write(",\n")
   end
   local ti = stat.time_interval
   io.write(sformat([[
  {
    "time": %4.0f,
    "threads": %u,
    "tps": %4.2f,
    "qps": {
      "total": %4.2f,
      "reads": %4.2f,
      "writes": %4.2f,
      "other": %4.2f
    },
    "latency": %4.2f,
    "errors": %4.2f,
    "reconnects": %4.2f
  }]], stat.time_total, stat.threads_running, stat.events / ti,
         (stat.reads + stat.writes + stat.other) / ti, stat.reads / ti, stat.writes / ti,
         stat.other / ti, stat.latency_pct * 1000, stat.errors / ti, stat.reconnects / ti))
end

-----------------------------------------------------------------------------
-- the built-in event loop (a script may replace the global thread_run)
-----------------------------------------------------------------------------
function thread_run(thread_id)
   while host_more(thread_id) do
      host_start(thread_id)
      local ok, ret
      repeat
         ok, ret = pcall(event, thread_id)
         if not ok then
            if type(ret) == "table" and ret.errcode == sysbench.error.RESTART_EVENT then
               local hook = sysbench.hooks.before_restart_event
               if hook then hook(ret) end
            else
               error(ret, 0)
            end
         end
      until ok
      if ret then break end
      host_stop(thread_id)
   end
end
local builtin_thread_run = thread_run
-- after each counted event sysbench draws once for its histogram shard when --percentile > 0;
-- the draw is thrown away, so it steps the generator through rnd_double: an interpreted FFI
-- call returning uint64_t boxes a cdata (24 bytes of garbage an event, and the collector's
-- work on it was about a third of a point select's time in LuaJIT)
sysbench.after_event = H.percentile > 0 and function() rnd_double() end or function() end
-- for the host's runner: an event's end handed to the C event loop without a yield, so that
-- the runner's loop compiles as one trace with its statements (lua/bridge.c's
-- pysysbench_event_done); < 0: yield it (not on a state's own stack, or a failed event)
sysbench.event_done = c_done and function(ok, r)
   if not ok or on_stack[0] == 0 then return -2 end
   return c_done((r ~= nil and r ~= false) and 1 or 0)
end or nil
-- for the host: does the script run its own event loop?
function sysbench.own_thread_run() return thread_run ~= builtin_thread_run end

-----------------------------------------------------------------------------
-- the legacy 0.5 API (spec 6)
-----------------------------------------------------------------------------
sysbench.db = {DB_ERROR_NONE = 0, DB_ERROR_RESTART_TRANSACTION = 1, DB_ERROR_FAILED = 2}
DB_ERROR_NONE, DB_ERROR_RESTART_TRANSACTION, DB_ERROR_FAILED = 0, 1, 2
thread_id = H.tid
test = H.script_path
mysql_table_engine = "innodb"
myisam_max_rows = 1000000
sb_rand = sysbench.rand.default
sb_rand_uniform = sysbench.rand.uniform
sb_rand_gaussian = sysbench.rand.gaussian
sb_rand_special = sysbench.rand.special
sb_rand_str = sysbench.rand.string
function sb_rnd()
   local v = rnd_u64()
   if ffi then return tonumber(v % ffi.cast("uint64_t", 4294967296)) end
   return v % 4294967296
end
function sb_rand_uniq(a, b)
   a = a or 0
   b = b or 4294967295
   local v
   repeat v = host_unique() until v >= a and v <= b
   return v
end

local legacy_con
local function legacy_connect()
   if legacy_con == nil or legacy_con.closed then
      local ok, drv = pcall(sql.driver)
      if not ok then error("DB initialization failed", 3) end
      db_driver = drv:name()
      local ok2, con = pcall(drv.connect, drv)
      if not ok2 then error("Failed to connect to the database", 3) end
      legacy_con = con
   end
   return legacy_con
end
local function legacy_need()
   if legacy_con == nil or legacy_con.closed then error("Uninitialized database connection", 3) end
   return legacy_con
end

function db_connect() legacy_connect() end
function db_disconnect()
   if legacy_con ~= nil and not legacy_con.closed then legacy_con:disconnect() end
   legacy_con = nil
end

local function legacy_run(con, query)
   free_rs(con)
   local r, a, b, c, d = yield(OP_QUERY, con.cid, query)
   if r == 0 or r == 1 then free_rs(con); return end
   local e = sql_failure(con, query, a, b, c, d)
   if type(e) == "table" then error({errcode = 1}, 0) end
   error("db_query() failed", 3)
end

function db_query(query)
   local con = legacy_connect()
   legacy_run(con, query)
end

function db_bulk_insert_init(prefix)
   local con = legacy_connect()
   local ok = pcall(con.bulk_insert_init, con, prefix)
   if not ok then error("db_bulk_insert_init() failed", 2) end
end
function db_bulk_insert_next(row)
   local con = legacy_need()
   local ok = pcall(con.bulk_insert_next, con, row)
   if not ok then error("db_bulk_insert_next() failed", 2) end
end
function db_bulk_insert_done()
   local con = legacy_need()
   pcall(con.bulk_insert_done, con)
end

local LStmt, LRs = {__name = "sysbench.stmt"}, {__name = "sysbench.rs"}
function db_prepare(query)
   local con = legacy_connect()
   local ok, stmt = pcall(con.prepare, con, query)
   if not ok then error("db_prepare() failed", 2) end
   return setmetatable({stmt = stmt}, LStmt)
end
local function check_stmt(s)
   if getmetatable(s) ~= LStmt then
      error("bad argument #1 to '?' (sysbench.stmt expected, got " .. type(s) .. ")", 3)
   end
end
local function check_tbl(t)
   if type(t) ~= "table" then error("table was expected", 3) end
   if next(t) == nil then error("table is empty", 3) end
end
function db_bind_param(s, tbl)
   legacy_need(); check_stmt(s); check_tbl(tbl)
   local keys = {}
   for k, v in pairs(tbl) do
      local vt = type(v)
      if vt ~= "number" and vt ~= "string" then error("Unsupported variable type: " .. vt, 2) end
      keys[#keys + 1] = {k, vt}
   end
   s.keys, s.tbl = keys, tbl
end
function db_bind_result(s, tbl)
   legacy_need(); check_stmt(s); check_tbl(tbl)
end
function db_execute(s)
   local con = legacy_need()
   check_stmt(s)
   local stmt = s.stmt
   if s.keys then
      local ps = {}
      for i, kv in ipairs(s.keys) do
         local v = s.tbl[kv[1]]
         if kv[2] == "number" and v ~= nil then
            v = v >= 0 and floor(v) or -floor(-v)
            v = (v + 2147483648) % 4294967296 - 2147483648
         end
         ps[i] = {v = v}
      end
      stmt.params, stmt.nparams = ps, #ps
   end
   free_rs(con)
   local p, n = stmt.params or {}, stmt.nparams
   local args = {}
   for i = 1, n do args[i] = param_value(p[i]) end
   local r, a, b, c, d = yield(OP_EXEC, stmt.id, unpack(args, 1, n))
   if r ~= 0 and r ~= 1 then
      local e = sql_failure(con, "<prepared statement>", a, b, c, d)
      if type(e) == "table" then error({errcode = 1}, 0) end
   end
   return setmetatable({}, LRs)
end
function db_store_results(rs)
   legacy_need()
   if getmetatable(rs) ~= LRs then error("bad argument #1 to '?' (sysbench.rs expected, got " .. type(rs) .. ")", 2) end
end
function db_free_results(rs)
   local con = legacy_need()
   free_rs(con)
end
function db_close(s)
   legacy_need(); check_stmt(s)
   s.stmt:close()
end

-----------------------------------------------------------------------------
-- finalizers: a state's end (lua/state.py LuaState.release) collects, so that the __gc
-- handlers of what the script no longer references run while the host is still there (lua_close
-- runs the rest, as in sysbench).  Full collections of a cache-cold heap per state were 0.6 s
-- of CPU at 1000 threads, needed only when something was given a finalizer: the ways a LuaJIT
-- script can (newproxy, ffi.gc, an ffi.metatype or debug.setmetatable with __gc) mark the
-- registry.  So do the io library's files (their __gc closes and flushes them), which a state
-- without a mark may otherwise never get: its lua_close waits until the run has been reported,
-- or never comes in a worker process that exits (LuaState.release).  The connections' own
-- ffi.gc (ffi_gc above) does not: the host closes them first.  A Lua 5.x runtime (tables with
-- __gc) always collects.
-----------------------------------------------------------------------------
do
   local dbg = package.loaded.debug     -- (the global `debug` becomes the --debug option)
   local registry = dbg and dbg.getregistry and dbg.getregistry()
   if registry and jit then
      local KEY = "pysysbench.finalizers"
      local function mark() registry[KEY] = true end
      local has_gc = function(mt) return type(mt) == "table" and rawget(mt, "__gc") ~= nil end
      local np = newproxy
      if np then
         newproxy = function(x, ...)
            if x then mark() end
            return np(x, ...)
         end
      end
      local dsm = dbg.setmetatable
      if dsm then
         dbg.setmetatable = function(o, mt, ...)
            if has_gc(mt) then mark() end
            return dsm(o, mt, ...)
         end
      end
      local lib_io = package.loaded.io
      if type(lib_io) == "table" then
         for _, name in ipairs({"open", "popen", "tmpfile", "output", "input"}) do
            local f = lib_io[name]
            if type(f) == "function" then
               lib_io[name] = function(...)
                  -- output(file) / input(file) open a file only when given a name
                  if (name ~= "output" and name ~= "input") or type((...)) == "string" then mark() end
                  return f(...)
               end
            end
         end
      end
      if ffi then
         local metatype = ffi.metatype
         ffi.gc = function(cd, fin, ...)
            if fin ~= nil then mark() end
            return ffi_gc(cd, fin, ...)
         end
         ffi.metatype = function(ct, mt, ...)
            if has_gc(mt) then mark() end
            return metatype(ct, mt, ...)
         end
      end
   end
end
