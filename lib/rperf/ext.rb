# frozen_string_literal: true

# Loads the C extension: installed as rperf/rperf_ext, or from a build
# directory on the load path as rperf_ext.
begin
  require "rperf/rperf_ext"
rescue LoadError
  require "rperf_ext"
end
