# frozen_string_literal: true

# Workload (a): four CPU-bound threads contending for one GVL. Pure Ruby
# arithmetic in a loop with method calls, so safepoints are frequent.
# Usage: cpu_threads(iterations) -> checksum (keeps the work observable).
module BenchWorkloads
  module_function

  def fib(n)
    n < 2 ? n : fib(n - 1) + fib(n - 2)
  end

  def cpu_threads(rounds = 60, threads: 4)
    Array.new(threads) do
      Thread.new do
        sum = 0
        rounds.times { sum += fib(22) }
        sum
      end
    end.sum(&:value)
  end
end
