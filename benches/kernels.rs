//! `cargo bench`: criterion over every variant the GPU can run, at each family's largest quick
//! size, timed by CUDA events (`iter_custom`). Each variant is verified before it is timed.
//! `kernel-lab bench` is the full harness (L2 flush, baselines, results files); this is for
//! criterion's change detection between builds.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use cudarc::driver::sys::CUevent_flags;
use kernel_lab::device::Gpu;
use kernel_lab::families::Unit;
use kernel_lab::runner::{self, Options};

fn kernels(c: &mut Criterion) {
    let mut gpu = match Gpu::open(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("kernel-lab benches SKIPPED: {e}");
            return;
        }
    };
    let plans = runner::plan(&Options { quick: true, ..Options::default() }).expect("the registry's own plan");
    for plan in plans {
        let fam = plan.family;
        let shape = plan.shapes.last().expect("every family has quick sizes").clone();
        let mut case = fam.prepare(&mut gpu, &shape, 0x5eed).expect("inputs fit on the GPU");
        let mut group = c.benchmark_group(format!("{}/{}", fam.name(), fam.label(&shape)));
        for v in plan.variants {
            let work = fam.work(&shape, Some(&v.config()));
            group.throughput(match fam.unit() {
                Unit::Tflops => Throughput::Elements(work.flops as u64),
                Unit::Gbs => Throughput::Bytes((work.bytes_read + work.bytes_written) as u64),
            });
            if let Err(why) = v.runnable_on(gpu.info.sm()).and_then(|_| fam.can_implement(v, &v.config(), &shape)) {
                eprintln!("{}: skipped: {why}", v.name);
                continue;
            }
            let kernel = gpu.kernel(v).expect("the fatbin loads");
            let gpu = &gpu;
            case.poison(gpu).unwrap();
            case.launch(gpu, &kernel).unwrap();
            gpu.sync().unwrap();
            let check = case.check(gpu, fam.precision()).unwrap();
            if !check.passed() {
                eprintln!("{}: FAILED verification, not timed: {}", v.name, check.describe());
                continue;
            }
            group.bench_function(v.name, |b| {
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
