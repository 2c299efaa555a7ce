# frozen_string_literal: true

# Runs every test/servers/test_*.rb (real Puma, Sidekiq and redis-server
# from Debian's packages; bin/setup-servers provides them):
#   ruby -I lib -I build/ext test/servers/run.rb
require "test/unit"
Dir[File.join(__dir__, "test_*.rb")].sort.each { |f| require File.expand_path(f) }
