-- A third-party-style sysbench script for bench/client_cost.py: ten statements per event
-- through sysbench's own SQL API (no oltp_common.lua), on the table sbtest1 that
-- `oltp_read_write prepare --tables=1` makes.  Runs on sysbench 1.0.20 and on pysysbench:
--   sysbench bench/ten_statements.lua --db-driver=mysql ... --table-size=10000 run

sysbench.cmdline.options = {
   table_size = {"Rows in sbtest1", 10000},
}

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   point = con:prepare("SELECT c FROM sbtest1 WHERE id = ?")
   point_id = point:bind_create(sysbench.sql.type.INT)
   point:bind_param(point_id)
   touch = con:prepare("UPDATE sbtest1 SET k = k + 1 WHERE id = ?")
   touch_id = touch:bind_create(sysbench.sql.type.INT)
   touch:bind_param(touch_id)
end

local function random_id()
   return sysbench.rand.uniform(1, sysbench.opt.table_size)
end

-- BEGIN, 4 prepared point selects, 2 plain-text range sums, 2 prepared updates, COMMIT
function event()
   con:query("BEGIN")
   for _ = 1, 4 do
      point_id:set(random_id())
      point:execute()
   end
   for _ = 1, 2 do
      local first = random_id()
      con:query(string.format("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN %d AND %d", first, first + 9))
   end
   for _ = 1, 2 do
      touch_id:set(random_id())
      touch:execute()
   end
   con:query("COMMIT")
end

function thread_done()
   point:close()
   touch:close()
   con:disconnect()
end
