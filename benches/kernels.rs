//! `cargo bench`: criterion over every variant the GPU can run, at each family's largest quick
//! size, timed by CUDA events (`iter_custom`). Each variant is verified before it is timed.
//! `kernel-lab bench` is the full harness (L2 flush, baselines, isolation, results files); this
//! is for criterion's change detection between builds.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use cudarc::driver::sys::CUevent_flags;
use kernel_lab::gpu::device::Gpu;
use kernel_lab::measure::families::can_run;
use kernel_lab::measure::plan::{self, Options};
use kernel_lab::schema::entry::Unit;

fn kernels(c: &mut Criterion) {
    let mut gpu = match Gpu::open(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("kernel-lab benches SKIPPED: {e}");
            return;
        }
    };
    let plans = plan::plan(&Options { quick: true, ..Options::default() }, 0x5eed).expect("the kernel set's own plan");
    for plan in plans {
        let fam = plan.family;
        let info = fam.info();
        let shape = plan.shapes.last().expect("every family has quick sizes").clone();
        let mut case = fam.prepare(&mut gpu, &shape, 0x5eed).expect("inputs fit on the GPU");
        let mut group = c.benchmark_group(format!("{}/{}", info.name(), info.shapes.label(&shape)));
        for v in plan.variants {
            if let Err(why) = can_run(v, &v.config(), &shape, gpu.info.sm()) {
                eprintln!("{}: skipped: {why}", v.name);
                continue;
            }
            let work = fam.work(&shape, Some(&v.launch));
            group.throughput(match info.unit {
                Unit::Tflops => Throughput::Elements(work.flops as u64),
                Unit::Gbs => Throughput::Bytes((work.bytes_read + work.bytes_written) as u64),
            });
            let kernel = gpu.kernel(v).expect("the fatbin loads");
            let gpu = &gpu;
            case.poison(gpu).unwrap();
            case.launch(gpu, &kernel).unwrap();
            gpu.sync().unwrap();
            let check = case.check(gpu, info.precision).unwrap();
            if !check.passed() {
                eprintln!("{}: FAILED verification, not timed: {}", v.name, check.describe());
                continue;
            }
            group.bench_function(v.name.as_str(), |b| {
                b.iter_custom(|iters| {
                    let start = gpu.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
                    let end = gpu.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
                    start.record(&gpu.stream).unwrap();
                    for _ in 0..iters {
                        case.launch(gpu, &kernel).unwrap();
                    }
                    end.record(&gpu.stream).unwrap();
                    Duration::from_secs_f64(start.elapsed_ms(&end).unwrap() as f64 / 1e3)
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, kernels);
criterion_main!(benches);
