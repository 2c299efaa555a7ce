# frozen_string_literal: true

module Rperf
  VERSION = "0.1.0"
end
