# frozen_string_literal: true

# Runs every test/ruby/test_*.rb with test-unit and exits non-zero on any
# failure. RPERF_TEST_FILTER=regexp keeps only the files whose name matches.
#   ruby -I lib -I build/ext test/ruby/run.rb
require "test/unit"

filter = ENV["RPERF_TEST_FILTER"]
filter = filter && !filter.empty? ? Regexp.new(filter) : nil
Dir[File.join(__dir__, "test_*.rb")].sort.each do |file|
  next if filter && !filter.match?(File.basename(file))

  require File.expand_path(file)
end
# test-unit's autorunner runs at exit and sets the exit status.
