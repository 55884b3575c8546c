; wide.ll: 64-bit integer and double arithmetic, unsigned division and remainder (the v_rcp_iflag
; expansion), LDS atomics and paired LDS loads, and a scalar select on a kernel argument.
target triple = "amdgcn-amd-amdhsa"

@lds = internal unnamed_addr addrspace(3) global [66 x i32] undef, align 8

declare i32 @llvm.amdgcn.workitem.id.x()
declare double @llvm.fma.f64(double, double, double)
declare void @llvm.amdgcn.s.barrier()

define amdgpu_kernel void @wide(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias readonly %a, i32 %d) #0 {
entry:
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr inbounds i64, ptr addrspace(1) %a, i32 %tx
  %x = load i64, ptr addrspace(1) %pa, align 8
  %m = mul i64 %x, 6364136223846793005
  %s = add i64 %m, 1442695040888963407
  %sh = lshr i64 %s, 17
  %x32 = trunc i64 %x to i32
  %q = udiv i32 %x32, %d
  %r = urem i32 %x32, %d
  %q64 = zext i32 %q to i64
  %r64 = zext i32 %r to i64
  %fx = uitofp i32 %x32 to double
  %f = call double @llvm.fma.f64(double %fx, double 0x3FF8000000000000, double -2.5e-3)
  %fi = fptosi double %f to i64
  %t0 = xor i64 %sh, %q64
  %t1 = add i64 %t0, %r64
  %t2 = add i64 %t1, %fi
  %lp = getelementptr inbounds [66 x i32], ptr addrspace(3) @lds, i32 0, i32 %tx
  store i32 %x32, ptr addrspace(3) %lp, align 4
  %cnt = getelementptr inbounds [66 x i32], ptr addrspace(3) @lds, i32 0, i32 64
  %z = icmp eq i32 %tx, 0
  br i1 %z, label %init, label %join
init:
  store i32 0, ptr addrspace(3) %cnt, align 8
  br label %join
join:
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %old = atomicrmw add ptr addrspace(3) %cnt, i32 %r syncscope("workgroup") monotonic, align 4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %pair = and i32 %tx, 30
  %pp = getelementptr inbounds [66 x i32], ptr addrspace(3) @lds, i32 0, i32 %pair
  %v2 = load <2 x i32>, ptr addrspace(3) %pp, align 8
  %e0 = extractelement <2 x i32> %v2, i32 0
  %e1 = extractelement <2 x i32> %v2, i32 1
  %total = load i32, ptr addrspace(3) %cnt, align 8
  %sum = add i32 %e0, %e1
  %sum2 = add i32 %sum, %total
  %sum64 = zext i32 %sum2 to i64
  %t3 = add i64 %t2, %sum64
  %po = getelementptr inbounds i64, ptr addrspace(1) %out, i32 %tx
  store i64 %t3, ptr addrspace(1) %po, align 8
  ret void
}

attributes #0 = { nounwind "amdgpu-flat-work-group-size"="64,64" }
