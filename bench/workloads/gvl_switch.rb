# frozen_string_literal: true

# Workload (b): eight threads in four ping-pong pairs over pipes. Every
# message is a 1-byte blocking read/write, so each one releases and
# re-acquires the GVL: the run makes hundreds of thousands of GVL hand-offs
# while doing almost no Ruby work in between. Ping-pong (rather than
# streaming) keeps the hand-off pattern, and so the run time, stable.
# Usage: gvl_switch(round_trips) -> round trips completed.
module BenchWorkloads
  module_function

  def gvl_switch(round_trips = 15_000, pairs: 4)
    threads = Array.new(pairs) do
      ping_r, ping_w = IO.pipe
      pong_r, pong_w = IO.pipe
      [
        Thread.new do
          round_trips.times do
            ping_w.write("x")
            pong_r.read(1)
          end
          ping_w.close
          round_trips
        end,
        Thread.new do
          while ping_r.read(1)
            pong_w.write("y")
          end
          pong_w.close
          0
        end
      ]
    end.flatten
    threads.sum(&:value)
  end
end
