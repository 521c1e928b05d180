-- A sibling module, as third-party TPC-C-style suites split theirs (loaded with require,
-- which finds it because the test runs from this directory: sysbench does not search the
-- script's own directory).
local ffi = require("ffi")
ffi.cdef[[
void sb_counter_inc(int, sb_counter_type);
typedef uint32_t useconds_t;
int usleep(useconds_t useconds);
]]

function create_tables(drv, con, n)
   local engine = drv:name() == "mysql" and " ENGINE=InnoDB" or ""
   con:query(string.format("CREATE TABLE lua_item%d (i_id INT NOT NULL, i_name VARCHAR(24), " ..
                           "i_price DECIMAL(5,2), i_data VARCHAR(50), PRIMARY KEY (i_id))%s", n, engine))
   con:bulk_insert_init(string.format("INSERT INTO lua_item%d (i_id, i_name, i_price, i_data) VALUES", n))
   for i = 1, sysbench.opt.items do
      local ok = con:bulk_insert_next(string.format("(%d, '%s', %d.%02d, %s)", i,
         sysbench.rand.string("@@@@@@@@"), sysbench.rand.uniform(1, 99), sysbench.rand.uniform(0, 99),
         i % 10 == 0 and "NULL" or ("'" .. string.rep(sysbench.rand.string("@"), 5) .. "'")))
      assert(ok)
   end
   con:bulk_insert_done()
end
