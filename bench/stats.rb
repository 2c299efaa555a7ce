# frozen_string_literal: true

# bench/stats.rb — the median the benches print. It does NOT pair runs or
# choose what to compare: each bench does.
module BenchStats
  module_function

  # The median of values (nils left out): the middle one, or the mean of the
  # two middle ones for an even count (a bench of 4 rounds reports between
  # its 2nd and 3rd, not its 3rd). nil when there are none.
  def median(values)
    sorted = values.compact.sort
    return nil if sorted.empty?

    mid = sorted.size / 2
    sorted.size.odd? ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2.0
  end
end
