#!/usr/bin/env sysbench
-- What third-party TPC-C-style suites use of sysbench's API (spec section 9), in one
-- small script written for pysysbench's tests: declared options with number and string
-- defaults, a parallel custom prepare, sysbench.opt, query/query_row/fetch_row with
-- nfields, bulk inserts, ffi.C.sb_counter_inc and usleep, report hooks, before_restart_event.
require("tpcc_common")

if sysbench.cmdline.command == nil then
   error("Command is required. Supported commands: prepare, run, cleanup, check, help")
end

sysbench.cmdline.options = {
   tables = {"Number of item tables", 1},
   items = {"Items per table", 50},
   use_fk = {"Use foreign keys", 0},
   trx_level = {"Transaction isolation level", "RR"},
   report_csv = {"Report intermediate results as CSV", "no"},
}

function cmd_prepare()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   for i = sysbench.tid % sysbench.opt.threads + 1, sysbench.opt.tables, sysbench.opt.threads do
      print(string.format("thread %d prepares lua_item%d", sysbench.tid, i))
      create_tables(drv, con, i)
   end
   con:disconnect()
end

function cmd_check()
   local con = sysbench.sql.driver():connect()
   for i = sysbench.tid % sysbench.opt.threads + 1, sysbench.opt.tables, sysbench.opt.threads do
      local n, nulls = con:query_row(string.format(
         "SELECT COUNT(*), SUM(CASE WHEN i_data IS NULL THEN 1 ELSE 0 END) FROM lua_item%d", i))
      print(string.format("check lua_item%d: %s rows, %s null", i, n, nulls))
   end
end

sysbench.cmdline.commands = {
   prepare = {cmd_prepare, sysbench.cmdline.PARALLEL_COMMAND},
   check = {cmd_check, sysbench.cmdline.PARALLEL_COMMAND},
}

function cleanup()
   local con = sysbench.sql.driver():connect()
   for i = 1, sysbench.opt.tables do
      con:query("DROP TABLE IF EXISTS lua_item" .. i)
   end
end

function init()
   assert(event ~= nil)
end

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   events = 0
end

function new_order()
   local t = sysbench.rand.uniform(1, sysbench.opt.tables)
   local id = sysbench.rand.uniform(1, sysbench.opt.items)
   con:query("BEGIN")
   local name, price = con:query_row(string.format("SELECT i_name, i_price FROM lua_item%d WHERE i_id = %d", t, id))
   assert(#name == 8 and tonumber(price) >= 1, "query_row returned " .. tostring(name) .. " " .. tostring(price))
   con:query(string.format("UPDATE lua_item%d SET i_price = i_price WHERE i_id = %d", t, id))
   con:query("COMMIT")
end

function stock_level()
   local t = sysbench.rand.uniform(1, sysbench.opt.tables)
   local rs = con:query(string.format("SELECT i_id, i_name, i_data FROM lua_item%d WHERE i_id <= 10 ORDER BY i_id", t))
   assert(rs.nfields == 3 and rs.nrows == 10, "nfields " .. rs.nfields .. " nrows " .. rs.nrows)
   for i = 1, rs.nrows do
      local a, b, c = unpack(rs:fetch_row(), 1, rs.nfields)
      assert(tonumber(a) == i and #b == 8)
      assert((i == 10) == (c == nil), "row " .. i .. " data " .. tostring(c))
   end
end

function rollback()
   con:query("BEGIN")
   con:query("ROLLBACK")
   ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_ERROR)   -- counted as an error, as TPC-C scripts do
end

function event()
   events = events + 1
   local trx = ({"new_order", "stock_level", "rollback"})[(events - 1) % 3 + 1]
   _G[trx]()
   if events == 1 then ffi.C.usleep(1000) end
end

function thread_done()
   print(string.format("thread %d done after %d events (use_fk=%s, trx_level=%s)", sysbench.tid, events,
                       tostring(sysbench.opt.use_fk == 0), sysbench.opt.trx_level))
   con:disconnect()
end

function sysbench.hooks.before_restart_event(err)
   con:query("ROLLBACK")
end

function sysbench.hooks.report_intermediate(stat)
   if sysbench.opt.report_csv == "yes" then
      sysbench.report_csv(stat)
   else
      sysbench.report_default(stat)
   end
end
