# frozen_string_literal: true

# Servers::Components — where the real server components for the server
# tests are: Debian's puma, nio4r, rack, sidekiq, redis, connection_pool
# and concurrent-ruby (pure Ruby files, installed by bin/setup-servers),
# Puma's C parser built for the running Ruby (bin/setup-servers builds it
# into the cache from Debian's puma source), redis-server and wrk. It does
# NOT start anything (Servers::Process does).
require "rbconfig"

module Servers
  module Components
    GEM_DIRS = ["/usr/share/rubygems-integration/all/gems",
                *Dir["/usr/lib/*/rubygems-integration/*/gems"]].freeze
    GEMS = %w[puma nio4r rack sidekiq redis connection_pool concurrent-ruby].freeze

    module_function

    # The lib directory of a Debian-packaged gem, or nil.
    def gem_lib(name)
      GEM_DIRS.flat_map { |d| Dir[File.join(d, "#{name}-[0-9]*")] }.max&.then { |d| File.join(d, "lib") }
    end

    def cache
      ENV.fetch("RPERF_GVL_CACHE", File.join(Dir.home, ".cache", "rperf-gvl"))
    end

    # The directory holding puma/puma_http11.so built for this Ruby.
    def puma_ext
      puma = gem_lib("puma")
      version = puma && puma[/puma-([0-9.]+)/, 1]
      dir = File.join(cache, "servers", "puma-#{version}-ruby-#{RUBY_VERSION}")
      File.exist?(File.join(dir, "puma", "puma_http11.so")) ? dir : nil
    end

    # Load-path arguments for a server child: the gems, Puma's parser, and
    # this project's lib and extension (the test's own load path).
    def ruby_args
      project = $LOAD_PATH.select { |d| File.exist?(File.join(d, "rperf.rb")) || File.exist?(File.join(d, "rperf_ext.so")) }
      dirs = [*project.map { |d| File.expand_path(d) }, puma_ext, *GEMS.map { |g| gem_lib(g) }].compact
      dirs.flat_map { |d| ["-I", d] }
    end

    # Why the components are not usable here, or nil when they are.
    def missing
      gone = GEMS.reject { |g| gem_lib(g) }
      return "Debian packages missing for #{gone.join(', ')} (bin/setup-servers installs them)" unless gone.empty?
      return "Puma's C parser is not built for Ruby #{RUBY_VERSION} (bin/setup-servers builds it)" unless puma_ext

      %w[redis-server wrk].each do |cmd|
        return "#{cmd} not found (bin/setup-servers installs it)" unless system("command -v #{cmd} >/dev/null 2>&1")
      end
      nil
    end

    # The environment every server child gets: nio4r in pure Ruby (its C
    # extension is not built here), patched by nio4r_pipe_drain.rb.
    def env
      { "NIO4R_PURE" => "true", "RUBYOPT" => "-r#{File.expand_path("nio4r_pipe_drain.rb", __dir__)}" }
    end
  end
end
